#!/usr/bin/env python3
"""mkimage.py ROOTFS OUT.tar NAME — write an OCI image archive of one layer.

The archive is an OCI image layout (oci-layout, index.json, blobs/sha256/*)
in a tar, as `ctr images import` reads it. The layer is the uncompressed tar
of ROOTFS (symlinks kept, owners 0:0); the image runs /bin/sh by default.
NAME is the image's reference, e.g. docker.io/library/agentbox-test:latest.
"""
import hashlib
import io
import json
import os
import sys
import tarfile


def add_blob(out, data, blobs):
    d = hashlib.sha256(data).hexdigest()
    if d not in blobs:
        ti = tarfile.TarInfo("blobs/sha256/" + d)
        ti.size = len(data)
        ti.mode = 0o644
        out.addfile(ti, io.BytesIO(data))
        blobs.add(d)
    return "sha256:" + d, len(data)


def layer_of(rootfs):
    buf = io.BytesIO()

    def reset(ti):
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        return ti

    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name in sorted(os.listdir(rootfs)):
            t.add(os.path.join(rootfs, name), arcname=name, filter=reset)
    return buf.getvalue()


def main():
    rootfs, out_path, name = sys.argv[1:4]
    layer = layer_of(rootfs)
    blobs = set()
    with tarfile.open(out_path, "w") as out:
        layer_digest, layer_size = add_blob(out, layer, blobs)
        config = {
            "architecture": "amd64",
            "os": "linux",
            "config": {
                "Cmd": ["/bin/sh"],
                "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
            },
            "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
        }
        cfg_digest, cfg_size = add_blob(out, json.dumps(config).encode(), blobs)
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                       "digest": cfg_digest, "size": cfg_size},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                        "digest": layer_digest, "size": layer_size}],
        }
        man_digest, man_size = add_blob(out, json.dumps(manifest).encode(), blobs)
        index = {
            "schemaVersion": 2,
            "manifests": [{
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": man_digest, "size": man_size,
                "platform": {"architecture": "amd64", "os": "linux"},
                "annotations": {"io.containerd.image.name": name,
                                "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1]},
            }],
        }
        for fname, data in (("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
                            ("index.json", json.dumps(index).encode())):
            ti = tarfile.TarInfo(fname)
            ti.size = len(data)
            ti.mode = 0o644
            out.addfile(ti, io.BytesIO(data))


if __name__ == "__main__":
    main()

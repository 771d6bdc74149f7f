#!/usr/bin/env python3
"""Write a small OCI image layout for the kit tests: two gzip'd layers over a
busybox-static root, the second whiting out a file of the first and making a
directory opaque.

usage: oci_layout.py OUT [--tag TAG] [--corrupt] [--escape] [--zstd] [--nested]
  --corrupt  layer 2 is not a tar (its digest is right)
  --escape   layer 2 has an entry ../escaped
  --through DIR  layer 1 has a symlink out -> DIR, layer 2 writes out/through-symlink
  --link-through DIR  layer 1 has a symlink out -> DIR, layer 2 a hard link h -> out/secret
  --zstd     layer 2 is tar+zstd (needs the zstd program)
  --nested   the tag names an image index: a foreign architecture's image (whose
             /layer2.txt says "wrong platform") first, then this host's
"""
import argparse, gzip, hashlib, io, json, os, platform, subprocess, tarfile

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--tag", default="v1")
ap.add_argument("--corrupt", action="store_true")
ap.add_argument("--escape", action="store_true")
ap.add_argument("--zstd", action="store_true")
ap.add_argument("--nested", action="store_true")
ap.add_argument("--through")
ap.add_argument("--link-through")
o = ap.parse_args()

os.makedirs(os.path.join(o.out, "blobs", "sha256"))


def blob(data, media):
    h = hashlib.sha256(data).hexdigest()
    with open(os.path.join(o.out, "blobs", "sha256", h), "wb") as f:
        f.write(data)
    return {"mediaType": media, "digest": "sha256:" + h, "size": len(data)}, h


def tar_of(entries):
    """entries: (name, kind, data/target, mode)"""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, kind, data, mode in entries:
            ti = tarfile.TarInfo(name)
            ti.mode, ti.uid, ti.gid, ti.mtime = mode, 0, 0, 1700000000
            if kind == "dir":
                ti.type = tarfile.DIRTYPE
                t.addfile(ti)
            elif kind == "hard":
                ti.type, ti.linkname = tarfile.LNKTYPE, data
                t.addfile(ti)
            elif kind == "sym":
                ti.type, ti.linkname = tarfile.SYMTYPE, data
                t.addfile(ti)
            else:
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


bb = open("/bin/busybox", "rb").read()
l1 = [("./", "dir", None, 0o755), ("bin", "dir", None, 0o755), ("bin/busybox", "file", bb, 0o755)]
l1 += [("bin/" + a, "sym", "busybox", 0o777) for a in ("sh", "ls", "cat", "id", "sleep", "true", "stat")]
l1 += [("etc", "dir", None, 0o755), ("etc/gone.txt", "file", b"from layer 1\n", 0o644),
       ("etc/kept.txt", "file", b"kept\n", 0o644),
       ("opq", "dir", None, 0o755), ("opq/old.txt", "file", b"old\n", 0o644),
       ("opq/sub", "dir", None, 0o755), ("opq/sub/deep.txt", "file", b"deep\n", 0o644)]
l2 = [("etc/.wh.gone.txt", "file", b"", 0o644), ("opq", "dir", None, 0o755),
      ("opq/new.txt", "file", b"new\n", 0o644), ("opq/.wh..wh..opq", "file", b"", 0o644),
      ("layer2.txt", "file", b"layer 2\n", 0o644)]
if o.escape:
    l2.append(("../escaped", "file", b"out\n", 0o644))
if o.through:
    l1.append(("out", "sym", o.through, 0o777))
    l2.append(("out/through-symlink", "file", b"out\n", 0o644))
if o.link_through:
    l1.append(("out", "sym", o.link_through, 0o777))
    l2.append(("h", "hard", "out/secret", 0o644))

layers = []
d, _ = blob(gzip.compress(tar_of(l1), mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip")
layers.append(d)
if o.corrupt:
    raw = gzip.compress(b"this is not a tar archive\n" * 40, mtime=0)
    d, _ = blob(raw, "application/vnd.oci.image.layer.v1.tar+gzip")
elif o.zstd:
    raw = subprocess.run(["zstd", "-q", "-c"], input=tar_of(l2), stdout=subprocess.PIPE, check=True).stdout
    d, _ = blob(raw, "application/vnd.oci.image.layer.v1.tar+zstd")
else:
    d, _ = blob(gzip.compress(tar_of(l2), mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip")
layers.append(d)

config = {
    "architecture": "amd64", "os": "linux",
    "config": {"Env": ["PATH=/bin", "IMG_VAR=from-image", "HOME=/nothere"],
               "Cmd": ["/bin/sh", "-c", "echo image-cmd"], "WorkingDir": "/opq"},
    "rootfs": {"type": "layers", "diff_ids": []},
}
cd, _ = blob(json.dumps(config).encode(), "application/vnd.oci.image.config.v1+json")
manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": cd, "layers": layers}
md, mh = blob(json.dumps(manifest).encode(), "application/vnd.oci.image.manifest.v1+json")
if o.nested:
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    other = "s390x" if arch != "s390x" else "arm64"
    wl, _ = blob(gzip.compress(tar_of([("layer2.txt", "file", b"wrong platform\n", 0o644)]), mtime=0),
                 "application/vnd.oci.image.layer.v1.tar+gzip")
    wd, _ = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                             "config": cd, "layers": layers[:1] + [wl]}).encode(),
                 "application/vnd.oci.image.manifest.v1+json")
    wd["platform"] = {"os": "linux", "architecture": other}
    md["platform"] = {"os": "linux", "architecture": arch}
    md, _ = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                             "manifests": [wd, md]}).encode(), "application/vnd.oci.image.index.v1+json")
md["annotations"] = {"org.opencontainers.image.ref.name": o.tag}
with open(os.path.join(o.out, "oci-layout"), "w") as f:
    json.dump({"imageLayoutVersion": "1.0.0"}, f)
with open(os.path.join(o.out, "index.json"), "w") as f:
    json.dump({"schemaVersion": 2, "manifests": [md]}, f)
print(mh)

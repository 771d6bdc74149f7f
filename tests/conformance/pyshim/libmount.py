"""Stand-in for util-linux's python libmount binding (not packaged by Debian):
just what crun's test_mounts.py uses -- Table(mountinfo).find_target(path)
returning an entry with vfs_options and fs_options. Like libmount, the search
runs backwards, so the topmost mount on a target wins."""


class Fs:
    def __init__(self, fields):
        sep = fields.index('-')
        self.target = fields[4].encode().decode('unicode_escape')
        self.vfs_options = fields[5]
        self.fstype = fields[sep + 1]
        self.source = fields[sep + 2]
        self.fs_options = fields[sep + 3] if len(fields) > sep + 3 else None
        self.options = self.vfs_options + (',' + self.fs_options if self.fs_options else '')


class Table:
    def __init__(self, path=None):
        self.fs = []
        if path:
            with open(path) as f:
                for line in f:
                    fields = line.split()
                    if len(fields) >= 10 and '-' in fields:
                        self.fs.append(Fs(fields))

    def find_target(self, target, direction=None):
        for fs in reversed(self.fs):
            if fs.target == target:
                return fs
        return None

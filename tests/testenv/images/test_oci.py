"""Unit tests of oci.py on a tiny synthetic image: the archive `pack` writes is an OCI layout and
a docker archive over the same blobs, `rename` keeps the blobs and changes every name, and
`verify` refuses an archive whose docker files disagree with its OCI index.

    python3 -m unittest discover -s tests/testenv/images -p 'test_*.py'

(the `release` test program of the strimzi-tests crate runs it). Standard library only.
"""

import contextlib
import gzip
import hashlib
import io
import json
import os
import tarfile
import tempfile
import types
import unittest

import oci

NAME = "localhost/strimzi-rs/operator:0.1.0"


def layer_bytes():
    """An uncompressed layer holding one file."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as layer:
        data = b"hello\n"
        info = tarfile.TarInfo("hello")
        info.size = len(data)
        layer.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def entries(path):
    """Every file entry of an archive: name -> bytes."""
    with tarfile.open(path) as archive:
        return {member.name: archive.extractfile(member).read() for member in archive.getmembers() if member.isfile()}


def rewrite(path, out, name, data):
    """A copy of the archive with the entry `name` replaced by `data`."""
    with tarfile.open(path) as source, tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as target:
        for member in source.getmembers():
            if member.name == name:
                member.size = len(data)
                target.addfile(member, io.BytesIO(data))
            else:
                target.addfile(member, source.extractfile(member) if member.isfile() else None)


class PackedImage(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        uncompressed = layer_bytes()
        self.diff_id = "sha256:" + hashlib.sha256(uncompressed).hexdigest()
        layer = self.path("layer.tar.gz")
        with open(layer, "wb") as stream:
            stream.write(gzip.compress(uncompressed, mtime=0))
        config = self.path("config.json")
        with open(config, "w", encoding="utf-8") as stream:
            json.dump({"User": "1001", "Cmd": ["/hello"]}, stream)
        self.archive = self.pack(layer, config, "image.tar")

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def pack(self, layer, config, out):
        with contextlib.redirect_stdout(io.StringIO()):
            oci.pack(types.SimpleNamespace(
                layer=layer, diff_id=self.diff_id, config=config, name=NAME, arch="amd64",
                created="2026-01-01T00:00:00Z", created_by="test_oci.py", out=self.path(out)))
        return self.path(out)

    def rename(self, name, out):
        with contextlib.redirect_stdout(io.StringIO()):
            oci.rename(types.SimpleNamespace(archive=self.archive, name=name, out=self.path(out)))
        return self.path(out)

    def test_pack_writes_both_layouts_over_the_same_blobs(self):
        files = entries(self.archive)
        blobs = {name for name in files if name.startswith("blobs/sha256/")}
        self.assertEqual(set(files) - blobs, {"oci-layout", "index.json", "manifest.json", "repositories"})
        index = json.loads(files["index.json"])
        descriptor = index["manifests"][0]
        self.assertEqual(descriptor["annotations"], {
            "io.containerd.image.name": NAME, "org.opencontainers.image.ref.name": "0.1.0"})
        manifest = json.loads(files[oci.blob_path(descriptor["digest"])])
        layer_entry = oci.blob_path(manifest["layers"][0]["digest"])
        self.assertEqual(json.loads(files["manifest.json"]), [{
            "Config": oci.blob_path(manifest["config"]["digest"]),
            "RepoTags": [NAME],
            "Layers": [layer_entry],
        }])
        self.assertEqual(json.loads(files["repositories"]),
                         {"localhost/strimzi-rs/operator": {"0.1.0": layer_entry.rsplit("/", 1)[1]}})
        self.assertEqual(blobs, {oci.blob_path(descriptor["digest"]), oci.blob_path(manifest["config"]["digest"]),
                                 layer_entry})
        config = json.loads(files[oci.blob_path(manifest["config"]["digest"])])
        self.assertEqual(config["rootfs"]["diff_ids"], [self.diff_id])
        self.assertIn("valid OCI layout and docker archive", oci.check_archive(self.archive, NAME))

    def test_pack_is_reproducible(self):
        with open(self.archive, "rb") as first:
            before = first.read()
        again = self.pack(self.path("layer.tar.gz"), self.path("config.json"), "again.tar")
        with open(again, "rb") as second:
            self.assertEqual(before, second.read())

    def test_rename_keeps_the_blobs_and_changes_every_name(self):
        renamed = self.rename("registry.example.com:5000/team/strimzi-rs-operator:0.1.0", "renamed.tar")
        before, after = entries(self.archive), entries(renamed)
        self.assertEqual({k: v for k, v in before.items() if k.startswith("blobs/")},
                         {k: v for k, v in after.items() if k.startswith("blobs/")})
        name = "registry.example.com:5000/team/strimzi-rs-operator:0.1.0"
        self.assertEqual(json.loads(after["index.json"])["manifests"][0]["annotations"]["io.containerd.image.name"], name)
        self.assertEqual(json.loads(after["manifest.json"])[0]["RepoTags"], [name])
        self.assertEqual(list(json.loads(after["repositories"])), ["registry.example.com:5000/team/strimzi-rs-operator"])
        oci.check_archive(renamed, name)
        with self.assertRaisesRegex(oci.Invalid, "expected localhost/strimzi-rs/operator:0.1.0"):
            oci.check_archive(renamed, NAME)

    def test_names_without_a_registry_are_written_as_docker_writes_them(self):
        files = entries(self.rename("team/operator:1", "hub.tar"))
        annotations = json.loads(files["index.json"])["manifests"][0]["annotations"]
        self.assertEqual(annotations["io.containerd.image.name"], "docker.io/team/operator:1")
        self.assertEqual(json.loads(files["manifest.json"])[0]["RepoTags"], ["team/operator:1"])
        files = entries(self.rename("busybox:1", "official.tar"))
        annotations = json.loads(files["index.json"])["manifests"][0]["annotations"]
        self.assertEqual(annotations["io.containerd.image.name"], "docker.io/library/busybox:1")
        self.assertEqual(json.loads(files["manifest.json"])[0]["RepoTags"], ["busybox:1"])
        self.assertEqual(list(json.loads(files["repositories"])), ["busybox"])

    def test_names_need_a_tag(self):
        with self.assertRaisesRegex(oci.Invalid, "has no tag"):
            self.rename("localhost:5000/operator", "untagged.tar")

    def test_verify_refuses_docker_files_that_disagree_with_the_index(self):
        files = entries(self.archive)
        docker = json.loads(files["manifest.json"])
        cases = {
            "RepoTags": ("manifest.json", [dict(docker[0], RepoTags=["localhost/other:0.1.0"])]),
            "Layers are not": ("manifest.json", [dict(docker[0], Layers=[docker[0]["Config"]])]),
            "Config is not": ("manifest.json", [dict(docker[0], Config=docker[0]["Layers"][0])]),
            "exactly one image": ("manifest.json", docker + docker),
            "repositories": ("repositories", {"localhost/strimzi-rs/operator": {"0.1.0": "0" * 64}}),
        }
        for problem, (entry, value) in cases.items():
            with self.subTest(problem):
                broken = self.path("broken.tar")
                rewrite(self.archive, broken, entry, json.dumps(value).encode())
                with self.assertRaisesRegex(oci.Invalid, problem):
                    oci.check_archive(broken, None)

    def test_verify_refuses_an_archive_without_the_docker_layout(self):
        broken = self.path("oci-only.tar")
        with tarfile.open(self.archive) as source, tarfile.open(broken, "w") as target:
            for member in source.getmembers():
                if member.name not in ("manifest.json", "repositories"):
                    target.addfile(member, source.extractfile(member) if member.isfile() else None)
        with self.assertRaisesRegex(oci.Invalid, "missing entry manifest.json"):
            oci.check_archive(broken, None)


if __name__ == "__main__":
    unittest.main()

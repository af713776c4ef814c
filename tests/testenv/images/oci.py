#!/usr/bin/env python3
"""Writes and checks single-layer OCI image archives (an OCI image layout packed in a tar).

    oci.py pack --layer LAYER.tar.gz --diff-id sha256:HEX --config CONFIG.json \
                --name REGISTRY/REPO:TAG --arch amd64 --created 2026-01-01T00:00:00Z --out IMAGE.tar
    oci.py verify IMAGE.tar [--name REGISTRY/REPO:TAG]
    oci.py dockerfile DOCKERFILE --config-out CONFIG.json

`pack` takes a gzip-compressed layer tar and the image's `config` section (Env, User,
WorkingDir, Entrypoint, Cmd, Labels: the runtime settings) and writes an archive holding
`oci-layout`, `index.json` (one manifest, annotated with the full image name for containerd
and the tag for other OCI tools), and the manifest, config and layer blobs under
`blobs/sha256/`. The archive's own entries are sorted, owned by root and dated `--created`,
so the same inputs give the same bytes.

`verify` re-reads an archive and checks every digest and size, the layer's diff_id (the
digest of the uncompressed layer) and the JSON shapes; it prints one summary line or exits
non-zero with the first problem found.

`dockerfile` reads a two-stage Dockerfile of the shape of the workspace's own (a build stage
that copies the build context and runs one script whose last argument is a folder, then a
`FROM scratch` stage that copies that folder to `/` and sets runtime options), writes the final
stage's runtime settings as a `config` section for `pack`, and prints the build script's
arguments without that folder, one per line, so the caller runs the same script on the machine
itself. Any other instruction or shape is an error: the file and this reading stay in step.

Only the Python standard library is used.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import shlex
import sys
import tarfile
from datetime import datetime

INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"
MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
CONFIG_MEDIA_TYPE = "application/vnd.oci.image.config.v1+json"
LAYER_MEDIA_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"
CHUNK = 1 << 20


def canonical_json(value):
    """Compact JSON with sorted keys: stable bytes for stable digests."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while True:
            chunk = stream.read(CHUNK)
            if not chunk:
                break
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def split_name(name):
    """'quay.io/strimzi/kafka:1.2.0' -> tag '1.2.0' (the part after the last ':' that is not
    inside the registry host)."""
    last_slash = name.rfind("/")
    colon = name.rfind(":")
    if colon <= last_slash:
        raise SystemExit(f"oci.py: image name {name!r} has no tag")
    return name[colon + 1:]


def tar_entry(archive, name, data=None, path=None, mtime=0, directory=False):
    info = tarfile.TarInfo(name)
    info.mtime = mtime
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if directory:
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        archive.addfile(info)
        return
    info.mode = 0o644
    if path is not None:
        info.size = os.path.getsize(path)
        with open(path, "rb") as stream:
            archive.addfile(info, stream)
    else:
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))


def pack(args):
    tag = split_name(args.name)
    created = args.created
    mtime = epoch_of(created)
    with open(args.config, encoding="utf-8") as stream:
        runtime_config = json.load(stream)
    if not args.diff_id.startswith("sha256:") or len(args.diff_id) != 71:
        raise SystemExit(f"oci.py: bad diff id {args.diff_id!r}")

    layer_digest = file_sha256(args.layer)
    layer_size = os.path.getsize(args.layer)
    config = {
        "created": created,
        "architecture": args.arch,
        "os": "linux",
        "config": runtime_config,
        "rootfs": {"type": "layers", "diff_ids": [args.diff_id]},
        "history": [{"created": created, "created_by": args.created_by}],
    }
    config_bytes = canonical_json(config)
    config_digest = "sha256:" + hashlib.sha256(config_bytes).hexdigest()
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "config": {"mediaType": CONFIG_MEDIA_TYPE, "digest": config_digest, "size": len(config_bytes)},
        "layers": [{"mediaType": LAYER_MEDIA_TYPE, "digest": layer_digest, "size": layer_size}],
    }
    manifest_bytes = canonical_json(manifest)
    manifest_digest = "sha256:" + hashlib.sha256(manifest_bytes).hexdigest()
    index = {
        "schemaVersion": 2,
        "mediaType": INDEX_MEDIA_TYPE,
        "manifests": [{
            "mediaType": MANIFEST_MEDIA_TYPE,
            "digest": manifest_digest,
            "size": len(manifest_bytes),
            "platform": {"architecture": args.arch, "os": "linux"},
            "annotations": {
                "io.containerd.image.name": args.name,
                "org.opencontainers.image.ref.name": tag,
            },
        }],
    }
    blobs = sorted([
        (config_digest, config_bytes, None),
        (manifest_digest, manifest_bytes, None),
        (layer_digest, None, args.layer),
    ])
    with tarfile.open(args.out, "w", format=tarfile.PAX_FORMAT) as archive:
        tar_entry(archive, "blobs", mtime=mtime, directory=True)
        tar_entry(archive, "blobs/sha256", mtime=mtime, directory=True)
        for digest, data, path in blobs:
            tar_entry(archive, "blobs/sha256/" + digest[len("sha256:"):], data=data, path=path, mtime=mtime)
        tar_entry(archive, "index.json", data=canonical_json(index), mtime=mtime)
        tar_entry(archive, "oci-layout", data=canonical_json({"imageLayoutVersion": "1.0.0"}), mtime=mtime)
    print(f"{args.name} manifest {manifest_digest} layer {layer_digest} ({layer_size} bytes)")


def epoch_of(timestamp):
    moment = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ")
    return int((moment - datetime(1970, 1, 1)).total_seconds())


class Invalid(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Invalid(message)


def verify(args):
    try:
        summary = check_archive(args.archive, args.name)
    except (Invalid, OSError, tarfile.TarError, ValueError, KeyError) as error:
        print(f"oci.py: {args.archive}: {error}", file=sys.stderr)
        return 1
    print(summary)
    return 0


def check_archive(path, expected_name):
    with tarfile.open(path, "r:") as archive:
        members = {member.name: member for member in archive.getmembers() if member.isfile()}

        def read(name):
            expect(name in members, f"missing entry {name}")
            return archive.extractfile(members[name]).read()

        def blob(descriptor, what):
            digest = descriptor["digest"]
            expect(digest.startswith("sha256:"), f"{what}: unsupported digest {digest}")
            name = "blobs/sha256/" + digest[len("sha256:"):]
            expect(name in members, f"{what}: blob {digest} missing")
            expect(members[name].size == descriptor["size"],
                   f"{what}: size {members[name].size} but the descriptor says {descriptor['size']}")
            return name

        layout = json.loads(read("oci-layout"))
        expect(layout.get("imageLayoutVersion") == "1.0.0", "oci-layout: unexpected version")
        index = json.loads(read("index.json"))
        expect(index.get("schemaVersion") == 2, "index.json: schemaVersion is not 2")
        expect(len(index.get("manifests", [])) == 1, "index.json: expected exactly one manifest")
        descriptor = index["manifests"][0]
        expect(descriptor.get("mediaType") == MANIFEST_MEDIA_TYPE, "index.json: manifest media type")
        annotations = descriptor.get("annotations", {})
        name = annotations.get("io.containerd.image.name")
        expect(name, "index.json: no io.containerd.image.name annotation")
        expect(annotations.get("org.opencontainers.image.ref.name") == split_name(name),
               "index.json: org.opencontainers.image.ref.name is not the tag of the image name")
        if expected_name is not None:
            expect(name == expected_name, f"index.json: image is {name}, expected {expected_name}")

        manifest_entry = blob(descriptor, "manifest")
        manifest_bytes = read(manifest_entry)
        expect("sha256:" + hashlib.sha256(manifest_bytes).hexdigest() == descriptor["digest"],
               "manifest: digest mismatch")
        manifest = json.loads(manifest_bytes)
        expect(manifest.get("schemaVersion") == 2, "manifest: schemaVersion is not 2")
        expect(manifest["config"]["mediaType"] == CONFIG_MEDIA_TYPE, "manifest: config media type")
        config_entry = blob(manifest["config"], "config")
        config_bytes = read(config_entry)
        expect("sha256:" + hashlib.sha256(config_bytes).hexdigest() == manifest["config"]["digest"],
               "config: digest mismatch")
        config = json.loads(config_bytes)
        expect(config.get("os") == "linux" and config.get("architecture"), "config: os/architecture")
        expect(config.get("architecture") == descriptor.get("platform", {}).get("architecture"),
               "config: architecture differs from the index's platform")
        diff_ids = config.get("rootfs", {}).get("diff_ids", [])
        layers = manifest.get("layers", [])
        expect(len(layers) == len(diff_ids) and layers, "manifest layers and config diff_ids differ in count")

        total = 0
        for position, (layer, diff_id) in enumerate(zip(layers, diff_ids)):
            expect(layer["mediaType"] == LAYER_MEDIA_TYPE, f"layer {position}: media type")
            entry = blob(layer, f"layer {position}")
            compressed = hashlib.sha256()
            uncompressed = hashlib.sha256()
            stream = archive.extractfile(members[entry])
            # Hash the compressed bytes while gzip reads them.
            tee = HashingReader(stream, compressed)
            with gzip.GzipFile(fileobj=tee, mode="rb") as unzipped:
                while True:
                    chunk = unzipped.read(CHUNK)
                    if not chunk:
                        break
                    uncompressed.update(chunk)
            tee.drain()
            expect("sha256:" + compressed.hexdigest() == layer["digest"], f"layer {position}: digest mismatch")
            expect("sha256:" + uncompressed.hexdigest() == diff_id, f"layer {position}: diff_id mismatch")
            total += layer["size"]
        runtime = config.get("config", {})
        return (f"{name}: valid, {len(layers)} layer(s), {total} bytes compressed, "
                f"user {runtime.get('User', '')!r}, entrypoint {runtime.get('Entrypoint')}, cmd {runtime.get('Cmd')}")


class HashingReader(io.RawIOBase):
    """A readable stream that hashes what passes through it."""

    def __init__(self, inner, digest):
        super().__init__()
        self.inner = inner
        self.digest = digest

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self.inner.read(len(buffer))
        self.digest.update(data)
        buffer[:len(data)] = data
        return len(data)

    def drain(self):
        while True:
            data = self.inner.read(CHUNK)
            if not data:
                return
            self.digest.update(data)


def dockerfile_instructions(path):
    """(instruction, arguments) pairs: comments and blank lines dropped, continued lines joined."""
    instructions, pending = [], ""
    with open(path, encoding="utf-8") as stream:
        for line in stream:
            line = line.rstrip("\n")
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            text = (pending + line).strip()
            pending = ""
            keyword, _, rest = text.partition(" ")
            instructions.append((keyword.upper(), rest.strip()))
    expect(not pending, f"{path}: the last line continues")
    return instructions


def key_values(text, what):
    """`KEY=VALUE` pairs with shell quoting, as ENV and LABEL write them."""
    pairs = {}
    for word in shlex.split(text):
        key, equals, value = word.partition("=")
        expect(equals == "=" and key, f"{what}: expected KEY=VALUE, found {word!r}")
        pairs[key] = value
    return pairs


def dockerfile(args):
    arg_defaults, stages = {}, []
    for keyword, rest in dockerfile_instructions(args.dockerfile):
        if keyword == "ARG" and not stages:
            name, _, default = rest.partition("=")
            arg_defaults[name] = default
        elif keyword == "FROM":
            words = rest.split()
            base = re.sub(r"\$\{(\w+)\}", lambda m: arg_defaults.get(m.group(1), ""), words[0])
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            expect(len(words) in (1, 3), f"FROM {rest}: expected 'FROM <image> [AS <name>]'")
            stages.append({"base": base, "name": name, "steps": []})
        else:
            expect(stages, f"{keyword} before the first FROM")
            stages[-1]["steps"].append((keyword, rest))
    expect(len(stages) == 2, f"expected a build stage and a final stage, found {len(stages)} stages")
    build, final = stages
    runs = [rest for keyword, rest in build["steps"] if keyword == "RUN"]
    expect(len(runs) == 1, "the build stage must run exactly one command")
    for keyword, rest in build["steps"]:
        expect(keyword in ("WORKDIR", "COPY", "RUN"), f"build stage: unsupported instruction {keyword}")
        expect(keyword != "COPY" or rest == ". .", f"build stage: COPY {rest}: only 'COPY . .' (the whole context)")
    command = shlex.split(runs[0])
    expect(final["base"] == "scratch", f"the final stage must start FROM scratch, not {final['base']}")
    config, copied = {}, None
    for keyword, rest in final["steps"]:
        if keyword == "COPY":
            words = rest.split()
            expect(len(words) == 3 and words[0] == f"--from={build['name']}" and words[2] == "/",
                   f"final stage: COPY {rest}: only 'COPY --from={build['name']} <folder>/ /'")
            copied = words[1].rstrip("/")
        elif keyword == "USER":
            config["User"] = rest
        elif keyword == "WORKDIR":
            config["WorkingDir"] = rest
        elif keyword == "ENV":
            env = dict(item.split("=", 1) for item in config.get("Env", []))
            env.update(key_values(rest, "ENV"))
            config["Env"] = [f"{key}={value}" for key, value in env.items()]
        elif keyword == "LABEL":
            config.setdefault("Labels", {}).update(key_values(rest, "LABEL"))
        elif keyword in ("CMD", "ENTRYPOINT"):
            value = json.loads(rest)
            expect(isinstance(value, list) and all(isinstance(word, str) for word in value),
                   f"{keyword} must be the JSON (exec) form")
            config["Cmd" if keyword == "CMD" else "Entrypoint"] = value
        else:
            expect(False, f"final stage: unsupported instruction {keyword}")
    expect(copied is not None and command and command[-1].rstrip("/") == copied,
           f"the build command's last argument must be the folder the final stage copies ({copied})")
    with open(args.config_out, "w", encoding="utf-8") as stream:
        json.dump(config, stream, indent=2, sort_keys=True)
    for word in command[:-1]:
        print(word)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    packer = commands.add_parser("pack")
    packer.add_argument("--layer", required=True)
    packer.add_argument("--diff-id", required=True)
    packer.add_argument("--config", required=True)
    packer.add_argument("--name", required=True)
    packer.add_argument("--arch", required=True)
    packer.add_argument("--created", required=True)
    packer.add_argument("--created-by", default="tests/testenv/images/build-images.sh")
    packer.add_argument("--out", required=True)
    checker = commands.add_parser("verify")
    checker.add_argument("archive")
    checker.add_argument("--name")
    reader = commands.add_parser("dockerfile")
    reader.add_argument("dockerfile")
    reader.add_argument("--config-out", required=True)
    args = parser.parse_args()
    if args.command == "dockerfile":
        try:
            return dockerfile(args)
        except Invalid as problem:
            print(f"oci.py: {args.dockerfile}: {problem}", file=sys.stderr)
            return 1
    if args.command == "pack":
        pack(args)
        return 0
    return verify(args)


if __name__ == "__main__":
    sys.exit(main())

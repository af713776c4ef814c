#!/usr/bin/env python3
"""Writes and checks single-layer image archives that are an OCI image layout and a docker
archive at once, as `docker save` (25 and later) writes them.

    oci.py pack --layer LAYER.tar.gz --diff-id sha256:HEX --config CONFIG.json \
                --name REGISTRY/REPO:TAG --arch amd64 --created 2026-01-01T00:00:00Z --out IMAGE.tar
    oci.py rename IMAGE.tar --name REGISTRY/REPO:TAG --out RENAMED.tar
    oci.py verify IMAGE.tar [--name REGISTRY/REPO:TAG]
    oci.py dockerfile DOCKERFILE --config-out CONFIG.json

`pack` takes a gzip-compressed layer tar and the image's `config` section (Env, User,
WorkingDir, Entrypoint, Cmd, Labels: the runtime settings) and writes an archive holding the
manifest, config and layer blobs under `blobs/sha256/` and, pointing at those same blobs, both
layouts' files:
  - OCI: `oci-layout` and `index.json` (one manifest, annotated with the full image name for
    containerd, `ctr images import`, and the tag for other OCI tools);
  - docker: `manifest.json` (Config, RepoTags, Layers: blob paths) and `repositories` (the
    legacy name -> tag -> top layer map), for `docker load` and other docker-archive readers.
The archive's own entries are sorted, owned by root and dated `--created`, so the same inputs
give the same bytes. Names are written as docker does: fully qualified in the index
(`docker.io/library/` added to a name without a registry), in the short ("familiar") form in
`manifest.json` and `repositories`.

`rename` checks an archive as `verify` does and writes a copy under another name: the same
blobs (so the same image digest), new `index.json`, `manifest.json` and `repositories`, entries
dated as the original's `index.json`.

`verify` re-reads an archive and checks every digest and size, the layer's diff_id (the
digest of the uncompressed layer), the JSON shapes, and that the docker files name the same
image and blobs as the OCI index; it prints one summary line or exits non-zero with the first
problem found.

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


class Invalid(Exception):
    """A problem with an input file, reported as one line naming the file."""


def expect(condition, message):
    """Raises Invalid with the message unless the condition holds."""
    if not condition:
        raise Invalid(message)


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


def repository_and_tag(name):
    """'quay.io/strimzi/kafka:1.2.0' -> ('quay.io/strimzi/kafka', '1.2.0'): the tag is the part
    after the last ':' that is not inside the registry host."""
    last_slash = name.rfind("/")
    colon = name.rfind(":")
    if colon <= last_slash:
        raise Invalid(f"image name {name!r} has no tag")
    return name[:colon], name[colon + 1:]


def qualified(repository):
    """A repository as docker and containerd store it: with a registry (docker.io when the first
    part names none: neither '.' nor ':' in it, and not 'localhost') and, for a repository of
    one part, docker.io's 'library/'."""
    first, slash, _ = repository.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        return repository
    return ("docker.io/" if slash else "docker.io/library/") + repository


def familiar(repository):
    """The short form docker shows and writes into manifest.json and repositories: a qualified
    repository without 'docker.io/' and, for docker.io's official images, 'library/'."""
    if not repository.startswith("docker.io/"):
        return repository
    rest = repository[len("docker.io/"):]
    if rest.startswith("library/") and rest.count("/") == 1:
        return rest[len("library/"):]
    return rest


def qualified_name(name):
    """'kafka:1' -> 'docker.io/library/kafka:1'; a name with a registry stays as it is."""
    repository, tag = repository_and_tag(name)
    return f"{qualified(repository)}:{tag}"


def blob_path(digest):
    """The archive entry of a blob: 'sha256:HEX' -> 'blobs/sha256/HEX'."""
    expect(digest.startswith("sha256:"), f"unsupported digest {digest}")
    return "blobs/sha256/" + digest[len("sha256:"):]


def tar_entry(archive, name, mtime, stream=None, size=0):
    """One entry owned by root: a directory without a stream, else a file of `size` bytes."""
    info = tarfile.TarInfo(name)
    info.mtime = mtime
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if stream is None:
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
    else:
        info.mode = 0o644
        info.size = size
    archive.addfile(info, stream)


def write_archive(out, name, blobs, descriptor, manifest, mtime):
    """Writes an archive naming the image `name`: the blobs ((digest, size, open) triples,
    `open` giving a readable stream), then the OCI files (`index.json` with the manifest's
    `descriptor`, `oci-layout`) and the docker files (`manifest.json`, `repositories`) that
    point at the config and layer blobs of the OCI `manifest`. Entries are sorted and dated
    `mtime`."""
    repository, tag = repository_and_tag(qualified_name(name))
    layer_digests = [layer["digest"] for layer in manifest["layers"]]
    index = {
        "schemaVersion": 2,
        "mediaType": INDEX_MEDIA_TYPE,
        "manifests": [dict(descriptor, annotations={
            "io.containerd.image.name": f"{repository}:{tag}",
            "org.opencontainers.image.ref.name": tag,
        })],
    }
    docker_manifest = [{
        "Config": blob_path(manifest["config"]["digest"]),
        "RepoTags": [f"{familiar(repository)}:{tag}"],
        "Layers": [blob_path(digest) for digest in layer_digests],
    }]
    # What docker writes here: the top layer's blob, under the familiar name and the tag.
    repositories = {familiar(repository): {tag: layer_digests[-1][len("sha256:"):]}}
    files = {
        "index.json": canonical_json(index),
        "manifest.json": canonical_json(docker_manifest),
        "oci-layout": canonical_json({"imageLayoutVersion": "1.0.0"}),
        "repositories": canonical_json(repositories),
    }
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as archive:
        tar_entry(archive, "blobs", mtime)
        tar_entry(archive, "blobs/sha256", mtime)
        for digest, size, open_blob in sorted(blobs, key=lambda blob: blob[0]):
            with open_blob() as stream:
                tar_entry(archive, blob_path(digest), mtime, stream, size)
        for entry, data in sorted(files.items()):
            tar_entry(archive, entry, mtime, io.BytesIO(data), len(data))


def pack(args):
    created = args.created
    with open(args.config, encoding="utf-8") as stream:
        runtime_config = json.load(stream)
    expect(args.diff_id.startswith("sha256:") and len(args.diff_id) == 71, f"bad diff id {args.diff_id!r}")

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
    descriptor = {
        "mediaType": MANIFEST_MEDIA_TYPE,
        "digest": manifest_digest,
        "size": len(manifest_bytes),
        "platform": {"architecture": args.arch, "os": "linux"},
    }
    blobs = [
        (config_digest, len(config_bytes), lambda: io.BytesIO(config_bytes)),
        (manifest_digest, len(manifest_bytes), lambda: io.BytesIO(manifest_bytes)),
        (layer_digest, layer_size, lambda: open(args.layer, "rb")),
    ]
    write_archive(args.out, args.name, blobs, descriptor, manifest, epoch_of(created))
    print(f"{args.name} manifest {manifest_digest} layer {layer_digest} ({layer_size} bytes)")


def rename(args):
    """Copies a checked archive's blobs under a new name; checks the copy too."""
    check_archive(args.archive, None)
    with tarfile.open(args.archive, "r:") as source:
        members = {member.name: member for member in source.getmembers() if member.isfile()}
        index = json.loads(source.extractfile(members["index.json"]).read())
        descriptor = {key: value for key, value in index["manifests"][0].items() if key != "annotations"}
        manifest = json.loads(source.extractfile(members[blob_path(descriptor["digest"])]).read())
        digests = [descriptor["digest"], manifest["config"]["digest"]] + [layer["digest"] for layer in manifest["layers"]]
        blobs = [(digest, members[blob_path(digest)].size,
                  lambda member=members[blob_path(digest)]: source.extractfile(member)) for digest in digests]
        write_archive(args.out, args.name, blobs, descriptor, manifest, members["index.json"].mtime)
    print(check_archive(args.out, args.name))


def epoch_of(timestamp):
    moment = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ")
    return int((moment - datetime(1970, 1, 1)).total_seconds())


def verify(args):
    print(check_archive(args.archive, args.name))


def check_archive(path, expected_name):
    with tarfile.open(path, "r:") as archive:
        members = {member.name: member for member in archive.getmembers() if member.isfile()}

        def read(name):
            expect(name in members, f"missing entry {name}")
            return archive.extractfile(members[name]).read()

        def blob(descriptor, what):
            digest = descriptor["digest"]
            name = blob_path(digest)
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
        repository, tag = repository_and_tag(name)
        expect(qualified(repository) == repository, f"index.json: image name {name} has no registry")
        expect(annotations.get("org.opencontainers.image.ref.name") == tag,
               "index.json: org.opencontainers.image.ref.name is not the tag of the image name")
        if expected_name is not None:
            expected_name = qualified_name(expected_name)
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

        # The docker layout: the same image name and the same blobs.
        docker = json.loads(read("manifest.json"))
        expect(isinstance(docker, list) and len(docker) == 1, "manifest.json: expected exactly one image")
        repo_tags = [f"{familiar(repository)}:{tag}"]
        expect(docker[0].get("RepoTags") == repo_tags,
               f"manifest.json: RepoTags are {docker[0].get('RepoTags')}, expected {repo_tags}")
        expect(docker[0].get("Config") == config_entry, "manifest.json: Config is not the OCI manifest's config blob")
        expect(docker[0].get("Layers") == [blob_path(layer["digest"]) for layer in layers],
               "manifest.json: Layers are not the OCI manifest's layer blobs")
        top_layer = layers[-1]["digest"][len("sha256:"):]
        expect(json.loads(read("repositories")) == {familiar(repository): {tag: top_layer}},
               f"repositories: expected {familiar(repository)} -> {tag} -> the top layer {top_layer}")
        runtime = config.get("config", {})
        return (f"{name}: valid OCI layout and docker archive, {len(layers)} layer(s), {total} bytes compressed, "
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
    renamer = commands.add_parser("rename")
    renamer.add_argument("archive")
    renamer.add_argument("--name", required=True)
    renamer.add_argument("--out", required=True)
    checker = commands.add_parser("verify")
    checker.add_argument("archive")
    checker.add_argument("--name")
    reader = commands.add_parser("dockerfile")
    reader.add_argument("dockerfile")
    reader.add_argument("--config-out", required=True)
    args = parser.parse_args()
    command = {"pack": pack, "rename": rename, "verify": verify, "dockerfile": dockerfile}[args.command]
    # One line naming the file and the first problem found, and exit status 1.
    try:
        command(args)
    except (Invalid, OSError, tarfile.TarError, ValueError, KeyError) as problem:
        subject = getattr(args, "archive", None) or getattr(args, "dockerfile", None) or args.out
        print(f"oci.py: {subject}: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

//! Strimzi 1.2's reference data (`examples/`, `crds/`) and our own `examples/`, which the
//! compatibility tests of several crates read.

use std::path::{Path, PathBuf};

/// The workspace's root folder.
pub fn workspace_root() -> &'static Path {
    // This crate is `<root>/tests`.
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The Strimzi reference folder: `$STRIMZI_REFERENCE_DIR`, else `../shared/strimzi-reference`
/// beside the workspace.
///
/// # Panics
/// When the folder has no `examples/` and `crds/`, with a message saying how to provide it:
/// a compatibility test must fail, never pass without its data.
pub fn reference_dir() -> PathBuf {
    let dir = std::env::var_os("STRIMZI_REFERENCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/strimzi-reference"));
    assert!(
        dir.join("examples").is_dir() && dir.join("crds").is_dir(),
        "Strimzi reference data not found at {}: set STRIMZI_REFERENCE_DIR to the folder that \
         holds Strimzi 1.2's `examples/` and `crds/`",
        dir.display()
    );
    dir
}

/// Strimzi's example custom resources.
pub fn reference_examples_dir() -> PathBuf {
    reference_dir().join("examples")
}

/// Strimzi's CRD files.
pub fn reference_crds_dir() -> PathBuf {
    reference_dir().join("crds")
}

/// The project's own `examples/` folder.
pub fn own_examples_dir() -> PathBuf {
    workspace_root().join("examples")
}

/// Every `.yaml`/`.yml` file below `dir`, sorted.
///
/// # Panics
/// When `dir` or a folder below it cannot be read.
pub fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        let entries = std::fs::read_dir(&current)
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", current.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|error| panic!("cannot read {}: {error}", current.display()))
                .path();
            if path.is_dir() {
                pending.push(path);
            } else if matches!(
                path.extension().and_then(|extension| extension.to_str()),
                Some("yaml" | "yml")
            ) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_reference_data_and_our_examples() {
        assert!(yaml_files(&reference_examples_dir()).len() >= 40);
        assert_eq!(yaml_files(&reference_crds_dir()).len(), 10);
        assert!(!yaml_files(&own_examples_dir()).is_empty());
    }
}

//! Documentation that tests run: the shell blocks of a Markdown section, taken exactly as a
//! reader copies them, and a runner that executes one with `bash` the way a user's shell would.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The fenced ```` ```sh ```` blocks of the section under `heading` (a whole heading line, such
/// as `## Install on your cluster`), in order: from that line to the next heading of the same
/// or a higher level. Their text is unchanged but for the fences. An error names what is
/// missing: the heading, or any block in the section.
pub fn shell_blocks(markdown: &str, heading: &str) -> Result<Vec<String>, String> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    if level == 0 {
        return Err(format!("{heading:?} is not a Markdown heading"));
    }
    let mut lines = markdown.lines();
    if !lines.by_ref().any(|line| line.trim_end() == heading) {
        return Err(format!("no heading {heading:?}"));
    }
    let mut blocks = Vec::new();
    let mut block: Option<String> = None;
    for line in lines {
        match &mut block {
            Some(text) if line.trim_start().starts_with("```") => {
                blocks.push(std::mem::take(text));
                block = None;
            }
            Some(text) => {
                text.push_str(line);
                text.push('\n');
            }
            None if line.trim_start().starts_with("```sh") => block = Some(String::new()),
            None if is_heading_of_level_at_most(line, level) => break,
            None => {}
        }
    }
    if let Some(open) = block {
        return Err(format!(
            "under {heading:?}, a block is never closed: {open}"
        ));
    }
    if blocks.is_empty() {
        return Err(format!("no ```sh block under {heading:?}"));
    }
    Ok(blocks)
}

fn is_heading_of_level_at_most(line: &str, level: usize) -> bool {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    (1..=level).contains(&hashes) && line[hashes..].starts_with(' ')
}

/// What running a block gave.
#[derive(Debug)]
pub struct BlockRun {
    /// Its standard output and error, interleaved as written.
    pub output: String,
    /// How long it ran.
    pub took: Duration,
}

/// Runs `block` with `bash -e -o pipefail` in `dir`, with `environment` added to this
/// process's, standard output and error together; a failure (a non-zero exit) is an error
/// holding the block and everything it printed.
pub fn run_shell_block(
    block: &str,
    dir: &Path,
    environment: &[(&str, &std::ffi::OsStr)],
) -> Result<BlockRun, String> {
    let started = Instant::now();
    let output = Command::new("bash")
        .args(["-e", "-o", "pipefail", "-c", &format!("exec 2>&1\n{block}")])
        .current_dir(dir)
        .envs(environment.iter().copied())
        .output()
        .map_err(|error| format!("bash: {error}"))?;
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        Ok(BlockRun {
            output: printed,
            took: started.elapsed(),
        })
    } else {
        Err(format!(
            "this block failed ({}):\n{block}\nit printed:\n{printed}",
            output.status
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "# Title\n\n```sh\nnot this\n```\n\n## Install\n\nText.\n\n```sh\none\ntwo \\\n  three\n```\n\n```yaml\nkind: Skipped\n```\n\n### A subsection\n\n   ```sh\n   indented\n   ```\n\n## Next\n\n```sh\nnot this either\n```\n";

    #[test]
    fn the_sh_blocks_of_a_section_and_its_subsections_in_order_unchanged() {
        assert_eq!(
            shell_blocks(PAGE, "## Install").unwrap(),
            ["one\ntwo \\\n  three\n", "   indented\n"]
        );
    }

    #[test]
    fn a_missing_heading_an_empty_section_or_an_open_block_is_an_error() {
        assert!(
            shell_blocks(PAGE, "## Uninstall")
                .unwrap_err()
                .contains("no heading")
        );
        assert!(
            shell_blocks("## Empty\n\ntext\n## Other\n```sh\nx\n```\n", "## Empty")
                .unwrap_err()
                .contains("no ```sh block")
        );
        assert!(
            shell_blocks("## Open\n```sh\nx\n", "## Open")
                .unwrap_err()
                .contains("never closed")
        );
        assert!(shell_blocks(PAGE, "Install").is_err());
    }

    #[test]
    fn a_block_runs_in_its_folder_with_its_environment_and_a_failure_shows_its_output() {
        let dir = std::env::temp_dir();
        let run = run_shell_block(
            "echo \"$GREETING from $(pwd)\"\necho to-stderr >&2\n",
            &dir,
            &[("GREETING", std::ffi::OsStr::new("hello"))],
        )
        .unwrap();
        let here = dir.canonicalize().unwrap();
        assert_eq!(
            run.output,
            format!("hello from {}\nto-stderr\n", here.display())
        );
        let failed =
            run_shell_block("echo before\nfalse | cat\necho after\n", &dir, &[]).unwrap_err();
        assert!(
            failed.contains("before") && !failed.contains("\nafter\n"),
            "{failed}"
        );
    }
}

//! The `kubectl-strimzi` binary: `kubectl strimzi <command>` (see `--help`). Prints the
//! command's result on standard output; an error is one line on standard error and a non-zero
//! exit status (2: the command or its input, 3: a missing permission, 1: anything else).
//! `plan` exits with 4 when the operator would refuse the change.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use strimzi_kubectl_plugin::cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("kubectl strimzi: cannot start: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli.run()) {
        Ok(printed) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is no error of the command.
            let _ = stdout.write_all(printed.text.as_bytes());
            ExitCode::from(printed.exit_code)
        }
        Err(error) => {
            eprintln!("kubectl strimzi: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}

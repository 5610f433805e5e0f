use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches};
use neurobits_cli::cli::{self, Cli, Command};

/// Every failure is one line on stderr and exit code 2.
fn fail(msg: &str) -> ! {
    eprintln!("error: {}", msg.trim_start_matches("error: "));
    std::process::exit(2);
}

fn main() {
    // A closed pipe (`neurobits … | head -1`) ends the process quietly, as for any Unix filter,
    // rather than as a panic: Rust ignores SIGPIPE by default; restore the default action.
    // SAFETY: called first, before any other thread exists; SIG_DFL is a valid disposition.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    if let Err(e) = neurobits::io::atomic::install_signal_cleanup() {
        fail(&format!("{e:#}"));
    }
    // The matches, not only the parsed struct: `cli::stdout_is_data` reads which options were given.
    let matches = match Cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => e.exit(),
        // A bare command (`neurobits`, `neurobits gbnn`): its help, as clap renders it, exit 2.
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        Err(e) => {
            let text = e.render().to_string();
            let lines: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
                .collect();
            // One line (the promise for every error), with clap's usage hint kept at its end.
            let mut line = lines.join(" ").replace("Usage: ", "(usage: ");
            if text.contains("Usage:") {
                line.push(')');
            }
            fail(&line);
        }
    };
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| fail(&e.to_string()));
    neurobits::console::set_stdout_is_data(cli::stdout_is_data(&matches));
    // Old spellings still work, with a warning (clap's aliases cannot warn). Checked on the parsed
    // command, so that global options before it (`neurobits -q fpga …`) do not hide it.
    if matches!(cli.command, Command::Fpga(_)) {
        let args: Vec<String> = std::env::args().collect();
        for (old, new) in [("--rule", "--rules"), ("--json", "--out")] {
            if args.iter().any(|a| a == old || a.starts_with(&format!("{old}="))) {
                eprintln!("warning: `fpga {old}` is deprecated; use `{new}`");
            }
        }
    }
    if let Err(e) = cli::run(cli) {
        fail(&format!("{e:#}").replace('\n', " "));
    }
}

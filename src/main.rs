use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches};
use neurobits_cli::cli::{self, Cli, Command};
use neurobits_cli::exit;
use std::io::{IsTerminal, Write};

/// Every failure is one line on stderr and an exit code (`exit`: 2 bad input, 1 I/O failure).
fn fail(msg: &str, code: i32) -> ! {
    eprintln!("error: {}", msg.trim_start_matches("error: "));
    std::process::exit(code);
}

/// A command's error: its chain on one line, the exit code from what caused it.
fn fail_with(e: &anyhow::Error) -> ! {
    fail(&format!("{e:#}").replace('\n', " "), exit::code(e))
}

/// Writes to standard output and flushes it; a failure (`--help > /dev/full`) is exit code 1.
fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        fail(&format!("cannot write to standard output: {e}"), exit::FAILURE);
    }
}

fn main() {
    // First, so that a panic anywhere after this is one line and exit code 101 (`exit`).
    exit::install_panic_hook();
    match std::panic::catch_unwind(run) {
        Ok(()) => print_out(""), // flushes what is left: a failure there is exit code 1
        Err(_) => fail(&exit::take_panic_line(), exit::BUG),
    }
}

fn run() {
    // A closed pipe (`neurobits … | head -1`) ends the process quietly, as for any Unix filter,
    // rather than as a panic: Rust ignores SIGPIPE by default; restore the default action.
    // SAFETY: called first, before any other thread exists; SIG_DFL is a valid disposition.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    if let Err(e) = neurobits::io::atomic::install_signal_cleanup() {
        fail_with(&e);
    }
    // A hidden trigger, in debug builds only, that lets the tests see what a panic becomes.
    #[cfg(debug_assertions)]
    if std::env::var_os("NEUROBITS_TEST_PANIC").is_some() {
        panic!("NEUROBITS_TEST_PANIC is set");
    }
    // The matches, not only the parsed struct: `cli::stdout_is_data` reads which options were given.
    let matches = match Cli::command().try_get_matches() {
        Ok(m) => m,
        // Printed here rather than by clap, which ignores a failed write and exits 0.
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let text = e.render();
            let text = if std::io::stdout().is_terminal() { text.ansi().to_string() } else { text.to_string() };
            print_out(&text);
            std::process::exit(0);
        }
        // A bare command (`neurobits`, `neurobits gbnn`): its help, as clap renders it, exit 2.
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        // clap's message does not say which argument: name it, and the option before it.
        Err(e) if e.kind() == ErrorKind::InvalidUtf8 => {
            let args: Vec<_> = std::env::args_os().collect();
            let at = args.iter().position(|a| a.to_str().is_none()).unwrap_or(0);
            let after =
                at.checked_sub(1).and_then(|i| args[i].to_str()).map_or(String::new(), |p| format!(" (after {p})"));
            fail(&format!("argument {:?}{after} is not UTF-8", args[at]), exit::BAD_INPUT);
        }
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
            fail(&line, exit::BAD_INPUT);
        }
    };
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| fail(&e.to_string(), exit::BAD_INPUT));
    let stdout_is_data = cli::stdout_is_data(&matches);
    neurobits::console::set_stdout_is_data(stdout_is_data);
    if stdout_is_data {
        probe_stdout();
    }
    record_seeds(&Cli::command(), &matches);
    // Old spellings still work, with a warning (clap's aliases cannot warn). Checked on the parsed
    // command, so that global options before it (`neurobits -q fpga …`) do not hide it.
    if matches!(cli.command, Command::Fpga(_)) {
        // `args_os`: `args` panics on an argument that is not UTF-8 (a path may be any bytes).
        let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
        for (old, new) in [("--rule", "--rules"), ("--json", "--out")] {
            if args.iter().any(|a| a == old || a.starts_with(&format!("{old}="))) {
                eprintln!("warning: `fpga {old}` is deprecated; use `{new}`");
            }
        }
    }
    if let Err(e) = cli::run(cli) {
        fail_with(&e);
    }
}

/// Refuses, before any work, a data output to standard output that cannot take a byte
/// (`-o - > /dev/full`, a closed descriptor): exit code 1. Only a character device other than a
/// terminal is probed, by a write of zero bytes, which Linux answers as it would a real write on
/// `/dev/full` (ENOSPC) and which writes nothing on any device. A regular file, a pipe or a
/// terminal is not probed: a failed write there is found when it happens (exit 1, one line;
/// every file output is whole or absent). Human text (tables, summaries) is not probed either:
/// many commands print none, and `neurobits -q … > /dev/full` must work.
fn probe_stdout() {
    // SAFETY: fstat fills `st` for descriptor 1; a write of 0 bytes reads nothing.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(1, &mut st) } != 0 {
        fail(&format!("cannot write to standard output: {}", std::io::Error::last_os_error()), exit::FAILURE);
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFCHR || std::io::stdout().is_terminal() {
        return;
    }
    if unsafe { libc::write(1, [0u8; 0].as_ptr().cast(), 0) } < 0 {
        fail(&format!("cannot write to standard output: {}", std::io::Error::last_os_error()), exit::FAILURE);
    }
}

/// Every `*seed*` option of the command that runs, given or default, into the `meta` of the result
/// files it writes (so a run can be repeated from its JSON alone).
fn record_seeds(cmd: &clap::Command, m: &clap::ArgMatches) {
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if !id.contains("seed") {
            continue;
        }
        if let Ok(Some(raw)) = m.try_get_raw(id) {
            let vals: Vec<serde_json::Value> = raw
                .map(|v| {
                    let v = v.to_string_lossy();
                    v.parse::<u64>().map_or_else(|_| serde_json::Value::String(v.into_owned()), Into::into)
                })
                .collect();
            let value = if vals.len() == 1 { vals[0].clone() } else { serde_json::Value::Array(vals) };
            neurobits::io::json::record_seed(id, value);
        }
    }
    if let Some((name, sub)) = m.subcommand() {
        if let Some(cmd) = cmd.find_subcommand(name) {
            record_seeds(cmd, sub);
        }
    }
}

//! `esimdash completions SHELL` and `esimdash man`, generated from the command definitions so
//! that they never fall behind the flags.

use super::CommandError;
use crate::cli::Cli;

pub fn completions(shell: clap_complete::Shell) -> Result<(), CommandError> {
    let mut command = Cli::definition();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "esimdash", &mut out);
    write_out(&out)
}

pub fn man() -> Result<(), CommandError> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::definition()).render(&mut out)?;
    write_out(&out)
}

fn write_out(bytes: &[u8]) -> Result<(), CommandError> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(bytes)?;
    stdout.flush()?;
    Ok(())
}

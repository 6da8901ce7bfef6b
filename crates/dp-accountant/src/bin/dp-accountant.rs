//! `dp-accountant`: the audit command-line tool (built with `--features cli`).

fn main() {
    eprintln!("dp-accountant: the audit CLI is not built yet");
    std::process::exit(2);
}

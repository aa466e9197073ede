//! `hallclock web-password`: the stored form of a dashboard password, for the accounts file.

use std::io::BufRead;
use std::process::ExitCode;

use crate::web::session::{ITERATIONS, hash_password};

/// Read one line (the password) from standard input; print the `password = "…"` value.
pub fn password() -> ExitCode {
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        eprintln!("cannot read the password from standard input");
        return ExitCode::from(2);
    }
    let password = line.trim_end_matches(['\r', '\n']);
    if password.chars().count() < 8 {
        eprintln!("the password needs at least 8 characters");
        return ExitCode::from(2);
    }
    println!("password = \"{}\"", hash_password(password, ITERATIONS));
    ExitCode::SUCCESS
}

//! `--config FILE`: a TOML file whose keys are a command's long flags, with the same values
//! (`queue-limit = 64`, `forbid-url = ["*://*.bank.example/*"]`, `headless = true`). A flag
//! on the command line, or its environment variable, wins over the file; the file wins over
//! the defaults. The file becomes flags put before the command line's own, for the flags
//! that neither the command line nor the environment set, so clap checks its values exactly
//! as it checks flags.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Command};

/// The flag that names the file, on the command or its subcommand.
pub const FLAG: &str = "config";

/// `argv` with the settings of the file its `--config` names (if any) put in as flags.
/// A command line clap refuses is returned as it is, for clap to say why.
pub fn with_file(command: &Command, argv: Vec<OsString>) -> Result<Vec<OsString>, String> {
    // Built, so that a subcommand has the global flags too.
    let mut command = command.clone();
    command.build();
    // A flag the command requires may come from the file: not required yet.
    let Ok(matches) = lenient(command.clone()).try_get_matches_from(&argv) else {
        return Ok(argv);
    };
    // The settings belong to the subcommand that runs, if there is one.
    let (command, matches, at) = match matches.subcommand() {
        Some((name, sub)) => {
            let Some(subcommand) = command.find_subcommand(name) else {
                return Ok(argv);
            };
            let at = argv
                .iter()
                .position(|a| a.to_str() == Some(name))
                .map_or(argv.len(), |i| i + 1);
            (subcommand, sub, at)
        }
        None => (&command, &matches, 1),
    };
    let Some(path) = matches.try_get_one::<PathBuf>(FLAG).ok().flatten() else {
        return Ok(argv);
    };
    let flags = flags_from(command, matches, path)?;
    let mut merged = argv;
    let at = at.min(merged.len());
    merged.splice(at..at, flags);
    Ok(merged)
}

/// `command` with no flag required, in its subcommands too.
fn lenient(command: Command) -> Command {
    let names: Vec<String> = command
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    let mut command = command.mut_args(|arg| arg.required(false));
    for name in names {
        command = command.mut_subcommand(name, lenient);
    }
    command
}

/// The file's settings as flags, leaving out those the command line or environment set.
fn flags_from(command: &Command, matches: &ArgMatches, path: &Path) -> Result<Vec<OsString>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the config file {}: {e}", path.display()))?;
    let table: toml::Table = text
        .parse()
        .map_err(|e| format!("the config file {} is not TOML: {e}", path.display()))?;
    if let Ok(Some(open)) = crate::at_rest::others_may_read(path) {
        tracing::warn!(
            "the config file {} can be read by others ({open}); it may hold tokens",
            path.display()
        );
    }
    let mut flags = Vec::new();
    for (key, value) in table {
        let arg = command
            .get_arguments()
            .find(|a| a.get_long() == Some(key.as_str()) && key != FLAG)
            .ok_or_else(|| {
                format!(
                    "the config file {} names {key:?}, which is no flag of {} (each key is a flag's long name, without --)",
                    path.display(),
                    command.get_name()
                )
            })?;
        let given = matches!(
            matches.value_source(arg.get_id().as_str()),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        );
        if given {
            continue;
        }
        let flag = OsString::from(format!("--{key}"));
        match (arg.get_action(), value) {
            (ArgAction::SetTrue, toml::Value::Boolean(on)) => flags.extend(on.then_some(flag)),
            (ArgAction::SetTrue, other) => {
                return Err(format!(
                    "{key} in {} is a switch: true or false, not {other}",
                    path.display()
                ))
            }
            (_, toml::Value::Array(values)) => {
                for value in values {
                    flags.push(flag.clone());
                    flags.push(scalar(&key, value, path)?);
                }
            }
            (_, value) => {
                flags.push(flag);
                flags.push(scalar(&key, value, path)?);
            }
        }
    }
    Ok(flags)
}

fn scalar(key: &str, value: toml::Value, path: &Path) -> Result<OsString, String> {
    match value {
        toml::Value::String(text) => Ok(text.into()),
        toml::Value::Integer(n) => Ok(n.to_string().into()),
        toml::Value::Float(n) => Ok(n.to_string().into()),
        toml::Value::Boolean(b) => Ok(b.to_string().into()),
        other => Err(format!(
            "{key} in {} is a {}, not a value a flag takes",
            path.display(),
            other.type_str()
        )),
    }
}

/// A config file with every flag of `command` (but `--config` and subcommands'), each with its
/// help as a comment and its default as its value, or commented out where it has none.
pub fn defaults(command: &Command) -> String {
    let mut text = format!(
        "# {} settings: each key is a flag's long name; a flag on the command line wins.\n",
        command.get_name()
    );
    for arg in command.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if long == FLAG
            || arg.is_hide_set()
            || matches!(arg.get_action(), ArgAction::Help | ArgAction::Version)
        {
            continue;
        }
        text.push('\n');
        if let Some(help) = arg.get_long_help().or(arg.get_help()) {
            for line in help.to_string().lines() {
                text.push_str(&format!("# {line}\n").replace("# \n", "#\n"));
            }
        }
        if let Some(env) = arg.get_env() {
            text.push_str(&format!("# (environment: {})\n", env.to_string_lossy()));
        }
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| toml_value(&v.to_string_lossy()))
            .collect();
        match (arg.get_action(), defaults.as_slice()) {
            (ArgAction::SetTrue, _) => text.push_str(&format!("{long} = false\n")),
            (ArgAction::Append, _) => text.push_str(&format!("# {long} = []\n")),
            (_, []) => text.push_str(&format!("# {long} = \"...\"\n")),
            (_, [one]) => text.push_str(&format!("{long} = {one}\n")),
            (_, many) => text.push_str(&format!("{long} = [{}]\n", many.join(", "))),
        }
    }
    text
}

/// A default as TOML: a number stays a number, anything else a string.
fn toml_value(text: &str) -> String {
    if text.parse::<i64>().is_ok() {
        text.to_owned()
    } else {
        toml::Value::String(text.to_owned()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Arg;

    /// A command shaped like `tether-host`: global flags, and a subcommand with its own.
    fn command() -> Command {
        Command::new("host")
            .arg(
                Arg::new(FLAG)
                    .long(FLAG)
                    .global(true)
                    .value_parser(clap::value_parser!(PathBuf)),
            )
            .arg(
                Arg::new("log-format")
                    .long("log-format")
                    .global(true)
                    .default_value("text"),
            )
            .subcommand(
                Command::new("worker")
                    .arg(Arg::new("relay").long("relay").required(true))
                    .arg(Arg::new("headless").long("headless").action(ArgAction::SetTrue))
                    .arg(
                        Arg::new("forbid-url")
                            .long("forbid-url")
                            .action(ArgAction::Append),
                    )
                    .arg(
                        Arg::new("window-size")
                            .long("window-size")
                            .default_value("1280x800"),
                    ),
            )
    }

    fn run(file: &str, args: &[&str]) -> Result<ArgMatches, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.toml");
        std::fs::write(&path, file).unwrap();
        let mut argv: Vec<OsString> = vec!["host".into(), "worker".into()];
        argv.extend(args.iter().map(OsString::from));
        argv.extend(["--config".into(), path.into_os_string()]);
        let merged = with_file(&command(), argv)?;
        let matches = command()
            .try_get_matches_from(merged)
            .map_err(|e| e.to_string())?;
        Ok(matches.subcommand_matches("worker").unwrap().clone())
    }

    fn one<'a>(matches: &'a ArgMatches, id: &str) -> &'a str {
        matches.get_one::<String>(id).unwrap()
    }

    #[test]
    fn the_files_settings_are_flags_and_the_command_line_wins() {
        let file = r#"
            relay = "ws://from-file:1"
            headless = true
            forbid-url = ["*://a.example/*", "*://b.example/*"]
            log-format = "json"
            window-size = "800x600"
        "#;
        let from_file = run(file, &[]).unwrap();
        assert_eq!(
            one(&from_file, "relay"),
            "ws://from-file:1",
            "a required flag may come from the file"
        );
        assert!(from_file.get_flag("headless"));
        let forbidden: Vec<&String> = from_file.get_many("forbid-url").unwrap().collect();
        assert_eq!(forbidden, ["*://a.example/*", "*://b.example/*"]);
        assert_eq!(one(&from_file, "log-format"), "json", "a global flag too");
        assert_eq!(one(&from_file, "window-size"), "800x600", "over the default");

        let given = run(
            file,
            &[
                "--relay",
                "ws://given:2",
                "--forbid-url",
                "*://c.example/*",
                "--log-format",
                "text",
            ],
        )
        .unwrap();
        assert_eq!(one(&given, "relay"), "ws://given:2");
        let forbidden: Vec<&String> = given.get_many("forbid-url").unwrap().collect();
        assert_eq!(
            forbidden,
            ["*://c.example/*"],
            "the command line's list replaces the file's"
        );
        assert_eq!(one(&given, "log-format"), "text");
    }

    #[test]
    fn a_key_that_is_no_flag_or_a_wrong_switch_is_refused_saying_which() {
        let unknown = run("relay = \"ws://x:1\"\nrelays = 3\n", &[]).unwrap_err();
        assert!(
            unknown.contains("\"relays\"") && unknown.contains("no flag of worker"),
            "{unknown}"
        );
        let switch = run("relay = \"ws://x:1\"\nheadless = \"yes\"\n", &[]).unwrap_err();
        assert!(
            switch.contains("headless") && switch.contains("true or false"),
            "{switch}"
        );
        let broken = run("relay = ", &[]).unwrap_err();
        assert!(broken.contains("not TOML"), "{broken}");
    }

    #[test]
    fn the_defaults_file_reads_back_as_the_defaults() {
        let worker = command().find_subcommand("worker").unwrap().clone();
        let text = defaults(&worker);
        assert!(text.contains("window-size = \"1280x800\""), "{text}");
        assert!(text.contains("headless = false"), "{text}");
        assert!(text.contains("# forbid-url = []"), "{text}");
        let parsed: toml::Table = text.parse().unwrap();
        assert_eq!(parsed["window-size"].as_str(), Some("1280x800"));
    }
}

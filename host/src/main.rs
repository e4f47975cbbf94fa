//! The `tether-host` command line.

use clap::{CommandFactory, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "tether-host",
    version,
    about = "Tether's browser host: the browser-action catalog over CDP"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How log lines (on stderr) are written: text, or a JSON object a line for a log store.
    /// `RUST_LOG` filters them (default: `info` for a worker, `warn` otherwise).
    #[arg(
        long,
        value_enum,
        global = true,
        default_value = "text",
        env = "TETHER_LOG_FORMAT"
    )]
    log_format: tether_os::logs::LogFormat,
    /// A TOML file of the command's settings, each key a flag's long name (`relay`,
    /// `client-id`, `headless = true`); flags and their environment variables win over it.
    #[arg(long, global = true, value_name = "FILE", env = "TETHER_CONFIG")]
    config: Option<std::path::PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Run actions against a headless Chromium (launched, or at --browser-ws) and print each result.
    Exec(tether_host::modes::exec::ExecArgs),
    /// Serve a relay with a Chromium of this host's own (launched, or at --browser-ws).
    Worker(tether_host::modes::worker::WorkerArgs),
    /// Serve the catalog as MCP tools on stdio, with a Chromium of its own or through --relay.
    Mcp(tether_host::modes::mcp::McpArgs),
    /// Register this host with the browsers (native messaging) and write its config.
    Install(tether_host::modes::install::InstallArgs),
    /// Remove what install wrote.
    Uninstall,
}

fn main() -> std::process::ExitCode {
    // Chrome starts a native-messaging host with the caller's origin as its one argument
    // (and, on Windows, a --parent-window flag after it).
    let extension_origin = std::env::args()
        .nth(1)
        .filter(|arg| arg.starts_with("chrome-extension://"));
    let cli = match extension_origin {
        Some(_) => None,
        None => match tether_os::config_file::with_file(&Cli::command(), std::env::args_os().collect()) {
            Ok(argv) => Some(Cli::parse_from(argv)),
            Err(e) => {
                eprintln!("tether-host: {e}");
                return std::process::ExitCode::from(2);
            }
        },
    };
    // A worker is a service: its joins and losses of the relay are worth a line by default.
    let (format, default_filter) = match &cli {
        Some(cli) if matches!(cli.command, Command::Worker(_)) => (cli.log_format, "info,chromium=off"),
        Some(cli) => (cli.log_format, "warn,chromium=off"),
        None => (tether_os::logs::LogFormat::from_env(), "warn,chromium=off"),
    };
    tether_os::logs::init(format, default_filter);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("tether-host: cannot start the async runtime: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let code = runtime.block_on(async {
        let Some(cli) = cli else {
            return tether_host::modes::extension::main(extension_origin.unwrap_or_default()).await;
        };
        match cli.command {
            Command::Exec(args) => tether_host::modes::exec::main(args).await,
            Command::Worker(args) => tether_host::modes::worker::main(args).await,
            Command::Mcp(args) => tether_host::modes::mcp::main(args).await,
            Command::Install(args) => tether_host::modes::install::main_install(args),
            Command::Uninstall => tether_host::modes::install::main_uninstall(),
        }
    });
    // Tasks still parked (a blocking read of stdin, a relay link) must not keep the process.
    runtime.shutdown_background();
    code
}

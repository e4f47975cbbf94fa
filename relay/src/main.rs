//! The `tether-relay` command line.

use std::process::ExitCode;

use clap::Parser;
use tether_relay::artifacts::{ArtifactStore, Limits};
use tether_relay::config::{RelayArgs, Tokens};
use tether_relay::server::{router, AppState};

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let args = RelayArgs::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("tether-relay: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tether-relay: {e:#}");
            ExitCode::from(1)
        }
    }
}

async fn run(args: RelayArgs) -> anyhow::Result<()> {
    let (tokens, kept) = Tokens::resolve(&args)?;
    if let Some(path) = kept {
        tracing::info!("tokens are kept in {} (orchestrator and host)", path.display());
    }
    if !args.listen.ip().is_loopback() {
        tracing::warn!(
            "listening on {} without TLS: tokens cross the network in the clear; put a TLS proxy in front",
            args.listen
        );
    }
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    tracing::info!("listening on http://{}", listener.local_addr()?);
    let artifacts = ArtifactStore::open(&args.data_dir, Limits::default())?;
    axum::serve(listener, router(AppState::new(tokens, artifacts)))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

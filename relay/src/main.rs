//! The `tether-relay` command line.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use std::sync::Arc;
use std::time::Duration;

use tether_relay::cluster::{Cluster, Joining};
use tether_relay::config::{RelayArgs, RelayCommand, Tokens};
use tether_relay::core::state::{AppState, Relay};
use tether_relay::edge::agent_docs;
use tether_relay::server::serve;

/// jemalloc, not the system's malloc: under load (1000 sessions busy) glibc's malloc and free
/// took a fifth of the relay's CPU, with lock contention between the runtime's threads;
/// jemalloc gave ~1.4x the actions per second at ~1.5 MiB more with 1000 hosts
/// (docs/performance.md, "The relay"). Linux only, where it was measured (and where it
/// builds from here: not with MSVC, nor for macOS without Apple's headers); elsewhere the
/// system's allocator.
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let argv = match tether_os::config_file::with_file(&RelayArgs::command(), std::env::args_os().collect()) {
        Ok(argv) => argv,
        Err(e) => {
            eprintln!("tether-relay: {e}");
            return ExitCode::from(2);
        }
    };
    let args = RelayArgs::parse_from(argv);
    tether_os::logs::init(args.log_format, "info");
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
    if let Some(RelayCommand::AgentDocs { inject, relay_url }) = &args.command {
        let docs = agent_docs::render(
            tether_protocol::actions::catalog(),
            relay_url.trim_end_matches('/'),
        );
        return match inject {
            Some(path) => agent_docs::inject_into(path, &docs),
            None => {
                print!("{docs}");
                Ok(())
            }
        };
    }
    tether_os::at_rest::restrict_umask();
    if let Some(RelayCommand::HostToken {
        client_id,
        revoke,
        list,
        data_dir,
    }) = &args.command
    {
        return host_token(data_dir, client_id.as_deref(), revoke.as_deref(), *list);
    }
    if let Some(RelayCommand::Config { .. }) = &args.command {
        print!("{}", tether_os::config_file::defaults(&RelayArgs::command()));
        return Ok(());
    }
    if let Some(RelayCommand::MetricsToken { data_dir }) = &args.command {
        let (tokens, _) = Tokens::resolve_in(data_dir, [&None, &None, &None, &None])?;
        println!("{}", tokens.metrics);
        return Ok(());
    }
    let (tokens, kept) = Tokens::resolve(&args)?;
    if let Some(path) = kept {
        tracing::info!(
            "tokens are kept in {} (orchestrator, host, observer and metrics)",
            path.display()
        );
    }
    if !args.listen.ip().is_loopback() {
        tracing::warn!(
            "listening on {} without TLS: tokens cross the network in the clear; put a TLS proxy in front",
            args.listen
        );
    }
    if let Some(limit) = tether_relay::parts::open_files::raise() {
        tracing::debug!("open-file limit: {limit}");
    }
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    let mut relay = Relay::open(args.settings(), tokens, &args.data_dir, args.artifact_limits())?;
    if let Some(url) = &args.nats {
        let joining = Joining {
            url,
            relay_id: tether_relay::core::dispatch::run_id(),
            artifact_ttl: args.artifact_limits().ttl,
            artifact_secret: tether_relay::parts::ids::random_bytes(32),
        };
        let cluster = Cluster::join(joining).await?;
        relay.artifacts.use_secret(cluster.artifact_secret.clone());
        relay.deployment = Box::new(cluster);
    }
    tracing::info!("session logs go to {}", args.data_dir.join("logs").display());
    let relay = Arc::new(relay);
    relay.deployment.start(&relay).await?;
    let stopping = relay.clone();
    let grace = args.shutdown_grace();
    let shutdown = async move {
        stop_signal().await;
        tracing::info!("stopping: refusing new actions, letting running ones finish ({grace:?} at most)");
        stopping.shut_down(grace).await;
    };
    // Said once everything is ready: the test kit and scripts wait for this line.
    tracing::info!("listening on http://{}", listener.local_addr()?);
    serve(listener, AppState(relay.clone()), shutdown).await?;
    relay.shutdown.sockets_closed(Duration::from_secs(5)).await;
    tracing::info!("stopped");
    Ok(())
}

/// `tether-relay host-token`: mints, revokes or lists per-browser host tokens.
fn host_token(
    data_dir: &std::path::Path,
    client_id: Option<&str>,
    revoke: Option<&str>,
    list: bool,
) -> anyhow::Result<()> {
    use tether_relay::stores::host_tokens;
    tether_os::at_rest::restrict_umask();
    if list {
        for (client, created) in host_tokens::list(data_dir)? {
            println!("{client}\t(since {created})");
        }
    } else if let Some(client) = revoke {
        if host_tokens::revoke(data_dir, client)? {
            eprintln!("the token of {client} is revoked; it can no longer join");
        } else {
            eprintln!("{client} had no token of its own");
        }
    } else if let Some(client) = client_id {
        let token = host_tokens::mint(data_dir, client)?;
        eprintln!(
            "a host token for {client} (shown once; give it to that browser's host, e.g. tether-host install --token-file FILE):"
        );
        println!("{token}");
    }
    Ok(())
}

/// Ctrl-C, or SIGTERM from a service manager.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

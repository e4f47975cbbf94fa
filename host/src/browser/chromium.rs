//! Launches a Chromium for worker mode and `exec`, and ends it cleanly.
//!
//! The browser gets a throwaway profile, the flags that keep it off the network it does not
//! need (see docs/facts.md), and - on Linux and Windows - a bond to this process, so that a
//! host killed outright does not leave orphaned browsers behind (tether-os). It is driven over
//! a pipe (`--remote-debugging-pipe`: fds 3 and 4 of the child on Unix, inherited handles named
//! by `--remote-debugging-io-pipes` on Windows), which no other process can use; a DevTools
//! port, which any local process could drive, only where several clients must share one
//! browser (the test kit, benchmarks).

use chromiumoxide::cdp::browser_protocol::browser::{CloseParams, GetVersionParams};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use tokio::sync::watch;

use crate::cdp::connection::CdpConnection;
use crate::cdp::worker::WorkerTransport;
use crate::cdp::CdpError;
use tether_os::process::{ChildPipes, End, Handed};

const LAUNCH_TIMEOUT: Duration = Duration::from_secs(30);
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where Chromium usually lives. Debian's `/usr/bin/chromium` is a wrapper script that adds
/// flags of its own (an empty `--load-extension=`), so the real binary comes first.
#[cfg(not(windows))]
fn candidates() -> Vec<PathBuf> {
    [
        "/usr/lib/chromium/chromium",
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
        "/usr/bin/google-chrome-stable",
        "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
        "/Applications/Chromium.app/Contents/MacOS/Chromium",
        "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect()
}

/// Where Chrome, Chromium and Edge install themselves on Windows: for all users under the
/// program folders, for one user under their local app data.
#[cfg(windows)]
fn candidates() -> Vec<PathBuf> {
    let folders = ["ProgramFiles", "ProgramFiles(x86)", "LOCALAPPDATA"]
        .into_iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from);
    let browsers = [
        r"Google\Chrome\Application\chrome.exe",
        r"Chromium\Application\chrome.exe",
        r"Microsoft\Edge\Application\msedge.exe",
    ];
    folders
        .flat_map(|folder| browsers.iter().map(move |b| folder.join(b)))
        .collect()
}

#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The browser binary; `None` looks in `$TETHER_CHROMIUM`, then the usual places.
    pub executable: Option<PathBuf>,
    pub headless: bool,
    pub window_size: (u32, u32),
    /// Extra flags, with their leading `--`.
    pub extra_args: Vec<String>,
    /// The profile to use (kept afterwards); `None`: a throwaway one. Chromium's
    /// `$XDG_CONFIG_HOME` is its `config` folder either way.
    pub user_data_dir: Option<PathBuf>,
    /// How the browser is driven.
    pub debugging: Debugging,
}

/// How a launched browser is driven.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Debugging {
    /// Over a pipe only this process holds (docs/protocol.md §15).
    #[default]
    Pipe,
    /// Over a DevTools port on 127.0.0.1, for several clients of one browser. Any local process
    /// can drive it: for tests and benchmarks, never for a person's worker.
    Port,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        Self {
            executable: None,
            headless: true,
            window_size: (1280, 800),
            extra_args: Vec::new(),
            user_data_dir: None,
            debugging: Debugging::Pipe,
        }
    }
}

/// Flags that would open the browser to other clients, refused in `--chromium-arg` whatever
/// their case (Chromium on Windows reads switches case-insensitively).
const DEBUGGING_FLAGS: &[&str] = &[
    "--remote-debugging-port",
    "--remote-debugging-address",
    "--remote-debugging-pipe",
    "--remote-debugging-io-pipes",
];

/// A running Chromium this process launched. Dropping it sends SIGTERM; prefer [`Self::close`].
pub struct Chromium {
    pid: u32,
    endpoint: Endpoint,
    exited: watch::Receiver<bool>,
    // Held so a throwaway profile outlives the browser; deleted on drop.
    _profile: Option<tempfile::TempDir>,
}

impl Chromium {
    pub async fn launch(options: &LaunchOptions) -> Result<Self> {
        let executable = find_executable(options.executable.as_deref())?;
        if let Some(flag) = options.extra_args.iter().find(|a| {
            DEBUGGING_FLAGS
                .iter()
                .any(|f| a.to_ascii_lowercase().starts_with(f))
        }) {
            bail!("{flag} is not allowed: Tether drives the browser it launches over a pipe no other program can use");
        }
        let (profile, throwaway) = match &options.user_data_dir {
            Some(dir) => {
                // A kept profile holds the person's logins: only its owner may read it.
                tether_os::at_rest::private_dir(dir)
                    .with_context(|| format!("cannot make the profile folder {}", dir.display()))?;
                (dir.clone(), None)
            }
            None => {
                let temp = tempfile::Builder::new().prefix("tether-chromium-").tempdir()?;
                (temp.path().to_owned(), Some(temp))
            }
        };
        let mut command = Command::new(&executable);
        let pipes = match options.debugging {
            Debugging::Pipe => Some(ChildPipes::new(&mut command)?),
            Debugging::Port => None,
        };
        let inherited = pipes.as_ref().and_then(|(_, handed)| handed.handles);
        command
            .args(flags(options, &profile, inherited))
            // Chromium writes crash reports under $XDG_CONFIG_HOME even with a profile dir.
            .env("XDG_CONFIG_HOME", profile.join("config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        tether_os::process::before_spawn(&mut command);
        let (pipes, handed) = pipes.unzip();

        let (ws_tx, ws_rx) = tokio::sync::oneshot::channel();
        let (exited_tx, exited) = watch::channel(false);
        let (spawned_tx, spawned_rx) = std_mpsc::channel();
        // The reaper thread forks the child and lives exactly as long as it: the parent-death
        // signal follows the forking *thread*, so it must not be a pooled one.
        std::thread::Builder::new()
            .name("chromium-reaper".into())
            .spawn(move || reap(command, handed, spawned_tx, ws_tx, exited_tx))?;
        let pid = spawned_rx
            .recv()
            .context("the Chromium launcher thread died")?
            .with_context(|| format!("cannot start {}", executable.display()))?;

        let endpoint = match pipes {
            Some(pipes) => {
                let (to_browser, from_browser) =
                    pipes.into_async().context("cannot drive Chromium's pipe")?;
                let cdp = CdpConnection::over_pipe(to_browser, from_browser);
                ready(&cdp, ws_rx, pid).await?;
                Endpoint::Pipe(cdp)
            }
            None => Endpoint::Port(port_address(ws_rx, pid).await?),
        };
        tracing::info!(pid, "Chromium is up");
        Ok(Self {
            pid,
            endpoint,
            exited,
            _profile: throwaway,
        })
    }

    /// The connection over the browser's pipe, when it was launched with one.
    pub fn pipe(&self) -> Option<CdpConnection> {
        match &self.endpoint {
            Endpoint::Pipe(cdp) => Some(cdp.clone()),
            Endpoint::Port(_) => None,
        }
    }

    /// A transport on this browser: over its pipe, or its DevTools port.
    pub async fn transport(&self) -> Result<WorkerTransport, CdpError> {
        match &self.endpoint {
            Endpoint::Pipe(cdp) => WorkerTransport::new(cdp.clone()).await,
            Endpoint::Port(url) => WorkerTransport::connect(url).await,
        }
    }

    /// Resolves when the browser process has exited (closed, crashed or killed).
    pub async fn exited(&self) {
        let mut exited = self.exited.clone();
        let _ = exited.wait_for(|exited| *exited).await;
    }

    /// The browser endpoint, `ws://127.0.0.1:<port>/devtools/browser/<id>`, of a browser
    /// launched with [`Debugging::Port`]; `None` for one driven over its pipe.
    pub fn ws_url(&self) -> Option<&str> {
        match &self.endpoint {
            Endpoint::Port(url) => Some(url),
            Endpoint::Pipe(_) => None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Ends the browser as a person's does (`Browser.close`: it writes its profile out, so a
    /// kept profile has the cookies set last), then SIGTERM if it will not, and waits for the
    /// exit (SIGKILL after a grace period).
    pub async fn close(mut self) {
        let running = !*self.exited.borrow();
        if let (Endpoint::Pipe(cdp), true) = (&self.endpoint, running) {
            let asked = cdp.command(None, CloseParams {});
            let _ = tokio::time::timeout(CLOSE_TIMEOUT, asked).await;
            let exited = self.exited.wait_for(|exited| *exited);
            let _ = tokio::time::timeout(CLOSE_TIMEOUT, exited).await;
        }
        if !*self.exited.borrow() {
            tether_os::process::end(self.pid, End::Ask);
        }
        let wait = self.exited.wait_for(|exited| *exited);
        if tokio::time::timeout(CLOSE_TIMEOUT, wait).await.is_err() {
            tracing::warn!(pid = self.pid, "Chromium ignored SIGTERM; killing it");
            tether_os::process::end(self.pid, End::Now);
        }
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        if !*self.exited.borrow() {
            tether_os::process::end(self.pid, End::Ask);
        }
    }
}

/// The Chromium features the browser runs without: the address bar's WebUI popups, two views
/// with a renderer's document each in every window, which a browser driven over CDP never
/// shows. They cost 36 MiB (PSS) a session's window: 20 contexts with a page each took 57.3 MiB
/// apiece with them, 21.6 without (Chromium 148, headless; `docs/performance.md`).
const DISABLED_FEATURES: &str = "WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup";

/// The browser's command line; `inherited`: on Windows, the values of the pipe handles it
/// inherits.
fn flags(options: &LaunchOptions, profile: &Path, inherited: Option<(usize, usize)>) -> Vec<String> {
    let (w, h) = options.window_size;
    let debugging = match options.debugging {
        Debugging::Pipe => "--remote-debugging-pipe",
        Debugging::Port => "--remote-debugging-port=0",
    };
    let mut flags: Vec<String> = [
        debugging,
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--disable-breakpad",
        // Session tabs live in the background; they must not be throttled there.
        "--disable-background-timer-throttling",
        "--disable-backgrounding-occluded-windows",
        "--disable-renderer-backgrounding",
        "--mute-audio",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    if let Some((read, write)) = inherited {
        flags.push(format!("--remote-debugging-io-pipes={read},{write}"));
    }
    flags.push(format!("--user-data-dir={}", profile.display()));
    flags.push(format!("--window-size={w},{h}"));
    if options.headless {
        flags.extend(["--headless=new".into(), "--disable-gpu".into()]);
    }
    // Chromium refuses to run as root with its sandbox on.
    if tether_os::process::is_superuser() {
        flags.push("--no-sandbox".into());
    }
    // Chromium reads one `--disable-features`: the caller's are added to ours.
    let mut disabled = DISABLED_FEATURES.to_owned();
    for arg in &options.extra_args {
        match arg.strip_prefix("--disable-features=") {
            Some(theirs) if !theirs.is_empty() => disabled = format!("{disabled},{theirs}"),
            Some(_) => {}
            None => flags.push(arg.clone()),
        }
    }
    flags.push(format!("--disable-features={disabled}"));
    flags.push("about:blank".into());
    flags
}

fn find_executable(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = explicit {
        return Ok(path.to_owned());
    }
    if let Some(path) = std::env::var_os("TETHER_CHROMIUM") {
        return Ok(PathBuf::from(path));
    }
    let candidates = candidates();
    candidates.iter().find(|p| p.exists()).cloned().ok_or_else(|| {
        let looked: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
        anyhow!("no Chromium found (looked in {}); install Chrome or Chromium (Debian: apt-get install chromium) or pass --chromium PATH", looked.join(", "))
    })
}

type WsUrl = std::result::Result<String, String>;

/// How this process reaches the browser.
enum Endpoint {
    Pipe(CdpConnection),
    Port(String),
}

/// The DevTools address a browser launched with a port prints, or why there is none.
async fn port_address(ws_rx: tokio::sync::oneshot::Receiver<WsUrl>, pid: u32) -> Result<String> {
    match tokio::time::timeout(LAUNCH_TIMEOUT, ws_rx).await {
        Ok(Ok(Ok(url))) => Ok(url),
        Ok(Ok(Err(stderr_tail))) => bail!("Chromium exited during start-up:\n{stderr_tail}"),
        Ok(Err(_)) => bail!("Chromium's output ended before it printed its DevTools address"),
        Err(_) => {
            tether_os::process::end(pid, End::Now);
            bail!("Chromium printed no DevTools address within {LAUNCH_TIMEOUT:?}")
        }
    }
}

/// Waits until a browser driven over its pipe answers, or says why it never will (its
/// stderr, when it exited during start-up).
async fn ready(cdp: &CdpConnection, exited: tokio::sync::oneshot::Receiver<WsUrl>, pid: u32) -> Result<()> {
    let answered = cdp.command(None, GetVersionParams {});
    let outcome = tokio::time::timeout(LAUNCH_TIMEOUT, async {
        tokio::select! {
            answer = answered => answer.map(|_| ()).map_err(|e| anyhow!("Chromium did not answer over its pipe: {e}")),
            // Its stderr ends only when it exits: what it said then is why.
            Ok(Err(stderr_tail)) = exited => Err(anyhow!("Chromium exited during start-up:\n{stderr_tail}")),
        }
    })
    .await;
    match outcome {
        Ok(result) => result,
        Err(_) => {
            tether_os::process::end(pid, End::Now);
            bail!("Chromium did not answer over its pipe within {LAUNCH_TIMEOUT:?}")
        }
    }
}

fn reap(
    mut command: Command,
    handed: Option<Handed>,
    spawned: std_mpsc::Sender<std::io::Result<u32>>,
    ws_url: tokio::sync::oneshot::Sender<WsUrl>,
    exited: watch::Sender<bool>,
) {
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            let _ = spawned.send(Err(e));
            return;
        }
    };
    // The child has its own copies of the pipes' ends now; ours close, so a browser that
    // exits closes its pipe.
    drop(handed);
    tether_os::process::bound_to_parent(&child);
    let _ = spawned.send(Ok(child.id()));
    if let Some(stderr) = child.stderr.take() {
        std::thread::spawn(move || watch_stderr(stderr, ws_url));
    }
    let status = child.wait();
    tracing::debug!(?status, "Chromium exited");
    let _ = exited.send(true);
}

/// Finds the DevTools address in Chromium's stderr, then keeps draining it into the log so the
/// pipe never fills and blocks the browser.
fn watch_stderr(stderr: std::process::ChildStderr, ws_url: tokio::sync::oneshot::Sender<WsUrl>) {
    let mut ws_url = Some(ws_url);
    let mut tail: Vec<String> = Vec::new();
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        if let Some(url) = line.strip_prefix("DevTools listening on ") {
            if let Some(tx) = ws_url.take() {
                let _ = tx.send(Ok(url.trim().to_owned()));
            }
        } else if ws_url.is_some() {
            tail.push(line.clone());
            if tail.len() > 20 {
                tail.remove(0);
            }
        }
        tracing::debug!(target: "chromium", "{line}");
    }
    if let Some(tx) = ws_url {
        let _ = tx.send(Err(tail.join("\n")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_callers_disabled_features_join_ours_in_one_flag() {
        let options = LaunchOptions {
            extra_args: vec!["--disable-features=Translate".into(), "--lang=fr".into()],
            ..LaunchOptions::default()
        };
        let flags = flags(&options, Path::new("/tmp/profile"), None);
        let disabled: Vec<&String> = flags
            .iter()
            .filter(|f| f.starts_with("--disable-features"))
            .collect();
        assert_eq!(
            disabled,
            [&format!("--disable-features={DISABLED_FEATURES},Translate")]
        );
        assert!(flags.contains(&"--lang=fr".to_owned()), "{flags:?}");
    }
}

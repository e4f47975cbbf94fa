//! Launches a Chromium for worker mode and `exec`, and ends it cleanly.
//!
//! The browser gets a throwaway profile, the flags that keep it off the network it does not
//! need (see shared/spec/FACTS.md), and - on Linux - a parent-death signal, so that a host
//! killed with SIGKILL does not leave orphaned browsers behind.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use tokio::sync::watch;

const LAUNCH_TIMEOUT: Duration = Duration::from_secs(30);
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where Chromium usually lives. Debian's `/usr/bin/chromium` is a wrapper script that adds
/// flags of its own (an empty `--load-extension=`), so the real binary comes first.
const CANDIDATES: &[&str] = &[
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
];

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
}

impl Default for LaunchOptions {
    fn default() -> Self {
        Self {
            executable: None,
            headless: true,
            window_size: (1280, 800),
            extra_args: Vec::new(),
            user_data_dir: None,
        }
    }
}

/// A running Chromium this process launched. Dropping it sends SIGTERM; prefer [`Self::close`].
pub struct Chromium {
    pid: i32,
    ws_url: String,
    exited: watch::Receiver<bool>,
    // Held so a throwaway profile outlives the browser; deleted on drop.
    _profile: Option<tempfile::TempDir>,
}

impl Chromium {
    pub async fn launch(options: &LaunchOptions) -> Result<Self> {
        let executable = find_executable(options.executable.as_deref())?;
        let (profile, throwaway) = match &options.user_data_dir {
            Some(dir) => (dir.clone(), None),
            None => {
                let temp = tempfile::Builder::new().prefix("tether-chromium-").tempdir()?;
                (temp.path().to_owned(), Some(temp))
            }
        };
        let mut command = Command::new(&executable);
        command
            .args(flags(options, &profile))
            // Chromium writes crash reports under $XDG_CONFIG_HOME even with a profile dir.
            .env("XDG_CONFIG_HOME", profile.join("config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        die_with_parent(&mut command);

        let (ws_tx, ws_rx) = tokio::sync::oneshot::channel();
        let (exited_tx, exited) = watch::channel(false);
        let (spawned_tx, spawned_rx) = std_mpsc::channel();
        // The reaper thread forks the child and lives exactly as long as it: the parent-death
        // signal follows the forking *thread*, so it must not be a pooled one.
        std::thread::Builder::new()
            .name("chromium-reaper".into())
            .spawn(move || reap(command, spawned_tx, ws_tx, exited_tx))?;
        let pid = spawned_rx
            .recv()
            .context("the Chromium launcher thread died")?
            .with_context(|| format!("cannot start {}", executable.display()))?;

        let ws_url = match tokio::time::timeout(LAUNCH_TIMEOUT, ws_rx).await {
            Ok(Ok(Ok(url))) => url,
            Ok(Ok(Err(stderr_tail))) => bail!("Chromium exited during start-up:\n{stderr_tail}"),
            Ok(Err(_)) => bail!("Chromium's output ended before it printed its DevTools address"),
            Err(_) => {
                signal(pid, libc::SIGKILL);
                bail!("Chromium printed no DevTools address within {LAUNCH_TIMEOUT:?}")
            }
        };
        tracing::info!(pid, %ws_url, "Chromium is up");
        Ok(Self {
            pid,
            ws_url,
            exited,
            _profile: throwaway,
        })
    }

    /// Resolves when the browser process has exited (closed, crashed or killed).
    pub async fn exited(&self) {
        let mut exited = self.exited.clone();
        let _ = exited.wait_for(|exited| *exited).await;
    }

    /// The browser endpoint, `ws://127.0.0.1:<port>/devtools/browser/<id>`.
    pub fn ws_url(&self) -> &str {
        &self.ws_url
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// SIGTERM, then waits for the exit (SIGKILL after a grace period).
    pub async fn close(mut self) {
        if !*self.exited.borrow() {
            signal(self.pid, libc::SIGTERM);
        }
        let wait = self.exited.wait_for(|exited| *exited);
        if tokio::time::timeout(CLOSE_TIMEOUT, wait).await.is_err() {
            tracing::warn!(pid = self.pid, "Chromium ignored SIGTERM; killing it");
            signal(self.pid, libc::SIGKILL);
        }
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        if !*self.exited.borrow() {
            signal(self.pid, libc::SIGTERM);
        }
    }
}

fn flags(options: &LaunchOptions, profile: &Path) -> Vec<String> {
    let (w, h) = options.window_size;
    let mut flags: Vec<String> = [
        "--remote-debugging-port=0",
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
    flags.push(format!("--user-data-dir={}", profile.display()));
    flags.push(format!("--window-size={w},{h}"));
    if options.headless {
        flags.extend(["--headless=new".into(), "--disable-gpu".into()]);
    }
    // Chromium refuses to run as root with its sandbox on.
    if unsafe { libc::geteuid() } == 0 {
        flags.push("--no-sandbox".into());
    }
    flags.extend(options.extra_args.iter().cloned());
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
    CANDIDATES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .ok_or_else(|| {
            anyhow!("no Chromium found (looked in {}); install one (Debian: apt-get install chromium) or pass --chromium PATH", CANDIDATES.join(", "))
        })
}

type WsUrl = std::result::Result<String, String>;

fn reap(
    mut command: Command,
    spawned: std_mpsc::Sender<std::io::Result<i32>>,
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
    let _ = spawned.send(Ok(child.id() as i32));
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

fn signal(pid: i32, sig: i32) {
    // The reaper thread has not reaped the child while `exited` is false, so the pid is ours.
    unsafe {
        libc::kill(pid, sig);
    }
}

#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec here.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut Command) {}

//! The real `tether-relay` binary in a process of its own, for what only a process shows:
//! signals, exit codes, start-up warnings.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::binary;
use crate::relay::{RelayApi, HOST, ORCHESTRATOR};

pub struct RelayProcess {
    pub child: Child,
    pub addr: String,
    pub data: tempfile::TempDir,
    /// What it logged before it was ready.
    pub startup_log: Vec<String>,
    args: Vec<String>,
}

/// How the relay's process is started.
#[derive(Clone, Copy, Default)]
struct Limits {
    /// Its open-file limit, soft and hard (as under `ulimit -n`).
    open_files: Option<u64>,
}

/// A relay that was killed: its address and data dir, to start it again on.
pub struct Stopped {
    pub addr: String,
    pub data: tempfile::TempDir,
    args: Vec<String>,
}

impl Stopped {
    /// Starts the relay again on the same port and data dir, with the same flags.
    pub async fn restart(self) -> RelayProcess {
        let (ip, port) = self.addr.rsplit_once(':').expect("host:port");
        RelayProcess::spawn(
            ip,
            port.parse().expect("a port"),
            self.data,
            self.args,
            Limits::default(),
        )
        .await
    }
}

impl RelayProcess {
    /// Starts the relay on loopback with the test tokens and `args`; returns once it listens.
    pub async fn start(args: &[&str]) -> Self {
        Self::start_on("127.0.0.1", args).await
    }

    /// The same, listening on `ip` (reached through 127.0.0.1).
    pub async fn start_on(ip: &str, args: &[&str]) -> Self {
        let port = free_port();
        let data = tempfile::tempdir().unwrap();
        let args = args.iter().map(|a| a.to_string()).collect();
        Self::spawn(ip, port, data, args, Limits::default()).await
    }

    /// Starts the relay on a data dir the test made.
    pub async fn start_in(data: tempfile::TempDir, args: &[&str]) -> Self {
        let args = args.iter().map(|a| a.to_string()).collect();
        Self::spawn("127.0.0.1", free_port(), data, args, Limits::default()).await
    }

    /// Starts the relay as under `ulimit -n <open_files>` (soft and hard).
    pub async fn start_with_open_files(open_files: u64, args: &[&str]) -> Self {
        let args = args.iter().map(|a| a.to_string()).collect();
        let limits = Limits {
            open_files: Some(open_files),
        };
        Self::spawn(
            "127.0.0.1",
            free_port(),
            tempfile::tempdir().unwrap(),
            args,
            limits,
        )
        .await
    }

    async fn spawn(ip: &str, port: u16, data: tempfile::TempDir, args: Vec<String>, limits: Limits) -> Self {
        let addr = format!("127.0.0.1:{port}");
        let mut command = Command::new(binary("tether-relay"));
        if let Some(open_files) = limits.open_files {
            // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
            unsafe {
                command.pre_exec(move || {
                    let limit = libc::rlimit {
                        rlim_cur: open_files,
                        rlim_max: open_files,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                });
            }
        }
        let mut child = command
            .args(["--listen", &format!("{ip}:{port}")])
            .args([
                "--orchestrator-token",
                ORCHESTRATOR,
                "--host-token",
                HOST,
                "--data-dir",
            ])
            .arg(data.path())
            .args(&args)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let startup_log = ready_when(&mut child, "listening on", "the relay").await;
        Self {
            child,
            addr,
            data,
            startup_log,
            args,
        }
    }

    /// Its HTTP API, events and workers, as the test kit speaks them.
    pub fn api(&self) -> RelayApi {
        RelayApi {
            addr: self.addr.parse().expect("an address"),
        }
    }

    /// `kill -9`: the relay dies at once, writing nothing more; its data dir stays.
    pub async fn kill9(mut self) -> Stopped {
        self.child.start_kill().expect("SIGKILL");
        let _ = self.child.wait().await;
        Stopped {
            addr: self.addr,
            data: self.data,
            args: self.args,
        }
    }

    /// Its resident memory, in KiB.
    pub fn rss_kib(&self) -> u64 {
        rss_kib(self.child.id().expect("running"))
    }

    /// The CPU time it has used so far, user and system.
    pub fn cpu_time(&self) -> Duration {
        cpu_time(self.child.id().expect("running"))
    }

    pub fn terminate(&self) {
        let pid = self.child.id().expect("running");
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits (bounded) for the process to exit; its exit code.
    pub async fn exit_code(&mut self) -> Option<i32> {
        let status = tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("the relay exited after SIGTERM")
            .unwrap();
        status.code()
    }
}

/// A free TCP port of 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits (bounded) until a child process logs a line with `marker` on stderr; returns what it
/// logged until then. Its log is then drained, so it never blocks on a full pipe.
pub async fn ready_when(child: &mut Child, marker: &str, what: &str) -> Vec<String> {
    let mut lines = BufReader::new(child.stderr.take().expect("stderr piped")).lines();
    let mut log = Vec::new();
    let ready = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let found = line.contains(marker);
            log.push(line);
            if found {
                return;
            }
        }
        panic!("{what} exited before it was ready");
    };
    tokio::time::timeout(Duration::from_secs(20), ready)
        .await
        .unwrap_or_else(|_| panic!("{what} did not start"));
    // `TETHER_CHILD_LOGS=1` passes what the children log on to the test's own stderr.
    let echo = std::env::var_os("TETHER_CHILD_LOGS").is_some();
    let what = what.to_owned();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            if echo {
                eprintln!("[{what}] {line}");
            }
        }
    });
    log
}

/// The resident memory of process `pid`, in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("its /proc status");
    kib_field(&status, "VmRSS:").expect("VmRSS")
}

/// The value of a `/proc` line such as `VmRSS:   1234 kB`, in KiB.
fn kib_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find_map(|l| l.strip_prefix(key))?;
    line.trim().trim_end_matches("kB").trim().parse().ok()
}

/// The memory of process `root` and every process under it (a browser's renderers, GPU and
/// utility processes), in KiB: each process's proportional set size (its pages shared with
/// others counted as its share), so what the processes share is counted once, where a sum of
/// their RSS would count the browser's own code in every one.
pub fn tree_pss_kib(root: u32) -> u64 {
    tree_pss_by_kind(root).values().map(|(_, kib)| kib).sum()
}

/// The same by kind of process (Chromium's `--type`: `renderer`, `gpu-process`, `utility`,
/// ...; `browser` for the root): how many there are and their PSS in KiB.
pub fn tree_pss_by_kind(root: u32) -> std::collections::BTreeMap<String, (usize, u64)> {
    let parent_of = |pid: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // After the command's closing parenthesis: state, then the parent's pid.
        stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
    };
    let pids: Vec<u32> = std::fs::read_dir("/proc")
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let mut tree = vec![root];
    let mut grew = true;
    while grew {
        grew = false;
        for &pid in &pids {
            if !tree.contains(&pid) && parent_of(pid).is_some_and(|p| tree.contains(&p)) {
                tree.push(pid);
                grew = true;
            }
        }
    }
    let pss = |pid: u32| -> Option<u64> {
        let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
        kib_field(&rollup, "Pss:")
    };
    let kind = |pid: u32| -> String {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        // Chromium rewrites its processes' command lines into one argument, spaced.
        cmdline
            .split(|b| *b == 0 || *b == b' ')
            .find_map(|arg| arg.strip_prefix(b"--type="))
            .map(|t| String::from_utf8_lossy(t).into_owned())
            .unwrap_or_else(|| "browser".to_owned())
    };
    let mut kinds = std::collections::BTreeMap::new();
    for pid in tree {
        if let Some(kib) = pss(pid) {
            let entry: &mut (usize, u64) = kinds.entry(kind(pid)).or_default();
            entry.0 += 1;
            entry.1 += kib;
        }
    }
    kinds
}

/// The CPU time process `pid` has used so far, user and system (from `/proc/<pid>/stat`).
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("its /proc stat");
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th of
    // them, in clock ticks (100 a second on Linux).
    let after_name = stat.rsplit_once(')').expect("(comm)").1;
    let ticks: u64 = after_name
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|t| t.parse::<u64>().expect("a tick count"))
        .sum();
    Duration::from_millis(ticks * 10)
}

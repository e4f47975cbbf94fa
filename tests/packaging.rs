//! The service units in `packaging/systemd/` as systemd reads them: `systemd-analyze verify`
//! finds nothing to say (an unknown key, a bad value and a missing binary are all said), and
//! each is hardened as docs/operations.md promises. The units name the installed binaries
//! (/usr/local/bin); the check points them at the ones built here.

use std::path::Path;
use std::process::Command;

const UNITS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../packaging/systemd");

/// The unit `name`, with its binary pointed at the one built here, in `dir`.
fn place(dir: &Path, name: &str, binary: &str) -> String {
    let text = std::fs::read_to_string(Path::new(UNITS).join(name)).unwrap();
    let built = tether_tests::binary(binary);
    let placed = text.replace(&format!("/usr/local/bin/{binary}"), built.to_str().unwrap());
    std::fs::write(dir.join(name), &placed).unwrap();
    text
}

fn verify(dir: &Path, unit: &str) {
    let Ok(output) = Command::new("systemd-analyze")
        .args(["verify", "--man=no", unit])
        .current_dir(dir)
        .output()
    else {
        eprintln!("systemd-analyze is not installed here: {unit} is not verified");
        return;
    };
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && said.trim().is_empty(),
        "{unit}: {said}"
    );
}

fn has(unit: &str, lines: &[&str]) {
    for line in lines {
        assert!(unit.lines().any(|l| l == *line), "{line} is missing from\n{unit}");
    }
}

#[test]
fn the_relays_unit_verifies_and_is_hardened() {
    let dir = tempfile::tempdir().unwrap();
    let unit = place(dir.path(), "tether-relay.service", "tether-relay");
    verify(dir.path(), "tether-relay.service");
    has(
        &unit,
        &[
            "DynamicUser=yes",
            "StateDirectory=tether-relay",
            "ProtectSystem=strict",
            "ProtectHome=yes",
            "NoNewPrivileges=yes",
            "CapabilityBoundingSet=",
            "MemoryDenyWriteExecute=yes",
            "KillSignal=SIGTERM",
        ],
    );
}

#[test]
fn the_workers_unit_verifies_and_is_hardened() {
    let dir = tempfile::tempdir().unwrap();
    let unit = place(dir.path(), "tether-worker@.service", "tether-host");
    verify(dir.path(), "tether-worker@shop-1.service");
    has(
        &unit,
        &[
            "DynamicUser=yes",
            "StateDirectory=tether-worker/%i",
            "ProtectSystem=strict",
            "ProtectHome=yes",
            "NoNewPrivileges=yes",
            "LoadCredential=host-token:/etc/tether/host-token",
        ],
    );
    assert!(!unit.contains("--token "), "the token never on a command line");
}

//! The Debian package: scripts/build-deb.sh builds it from the debug binary the other tests
//! use (CI builds no release), `dpkg -i` installs it on this machine, the installed binary,
//! man pages, completion and unit paths are checked, and a drop guard purges it on every
//! path. The other tests run target/debug/racehorse by its full path (`common::bin`), so the
//! installed /usr/bin/racehorse never stands in for it. Needs root, dpkg and man-db
//! (scripts/test.sh installs them); RACEHORSE_REQUIRE_TOOLS=1 makes their absence a failure.

use crate::common::{bin, is_root, text};
use std::path::Path;
use std::process::{Command, Output};

fn has(tool: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {tool}")).output().is_ok_and(|o| o.status.success())
}

/// Why the package test cannot run here, if it cannot.
fn cannot_run() -> Option<String> {
    if !is_root() {
        return Some("needs root to dpkg -i".into());
    }
    if let Some(tool) = ["dpkg", "dpkg-deb", "man", "bash", "gzip"].into_iter().find(|t| !has(t)) {
        return Some(format!("{tool} is not installed (scripts/test.sh installs dpkg and man-db)"));
    }
    if Command::new("dpkg").args(["-s", "racehorse"]).output().is_ok_and(|o| o.status.success()) {
        return Some(
            "a racehorse package is installed here already; not touching it (dpkg --purge racehorse)".into(),
        );
    }
    if Path::new("/usr/bin/racehorse").exists() {
        return Some(
            "/usr/bin/racehorse exists and belongs to no package; dpkg -i would overwrite it".into(),
        );
    }
    None
}

/// Purges the package when dropped: after the checks, or when one of them panics.
struct Purge;

impl Drop for Purge {
    fn drop(&mut self) {
        let _ = Command::new("dpkg").args(["--purge", "racehorse"]).output();
    }
}

/// The `path-exclude` patterns of dpkg's configuration text that would drop `path`
/// (minimal container images exclude /usr/share/man and /usr/share/doc this way).
fn excluding(cfg: &str, path: &str) -> Vec<String> {
    cfg.lines()
        .filter_map(|l| l.trim().strip_prefix("path-exclude"))
        .map(|rest| rest.trim_start_matches(['=', ' ']).trim().to_string())
        .filter(|pat| match pat.strip_suffix('*') {
            Some(prefix) => path.starts_with(prefix),
            None => pat == path,
        })
        .collect()
}

fn dpkg_config() -> String {
    let mut cfg = std::fs::read_to_string("/etc/dpkg/dpkg.cfg").unwrap_or_default();
    for entry in std::fs::read_dir("/etc/dpkg/dpkg.cfg.d").into_iter().flatten().flatten() {
        cfg += &std::fs::read_to_string(entry.path()).unwrap_or_default();
    }
    cfg
}

fn ok(o: Output, what: &str) -> String {
    assert!(o.status.success(), "{what}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn excluded_paths_are_recognised() {
    let cfg = "# minimal image\npath-exclude=/usr/share/man/*\npath-include=/usr/share/doc/*/copyright\n\
               path-exclude /usr/share/doc/*\n";
    assert_eq!(excluding(cfg, "/usr/share/man/man1/racehorse.1.gz"), ["/usr/share/man/*"]);
    assert_eq!(excluding(cfg, "/usr/share/doc/racehorse/plugd.md"), ["/usr/share/doc/*"]);
    assert!(excluding(cfg, "/usr/bin/racehorse").is_empty());
}

/// Builds the .deb with dpkg-deb and checks what it holds before installing it.
fn build_and_inspect(dir: &Path) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/build-deb.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(bin())
        .arg(dir)
        .env("RACEHORSE_DEB_COMPRESSION", "gzip")
        .output()
        .expect("bash");
    let deb = ok(out, "build-deb.sh").lines().last().expect("the .deb's path").to_string();
    let fields =
        ok(Command::new("dpkg-deb").args(["-f", &deb, "Package", "Depends"]).output().unwrap(), "-f");
    assert!(fields.contains("Package: racehorse") && fields.contains("libc6 (>="), "{fields}");
    let listing = ok(Command::new("dpkg-deb").args(["-c", &deb]).output().unwrap(), "dpkg-deb -c");
    for path in [
        "./usr/bin/racehorse",
        "./usr/share/man/man1/racehorse.1.gz",
        "./usr/share/man/man1/racehorse-run.1.gz",
        "./usr/share/bash-completion/completions/racehorse",
        "./usr/share/zsh/vendor-completions/_racehorse",
        "./usr/share/fish/vendor_completions.d/racehorse.fish",
        "./usr/share/doc/racehorse/plugd.md",
        "./usr/share/doc/racehorse/copyright",
        "./usr/lib/systemd/system/racehorse-plugd.service",
    ] {
        assert!(listing.lines().any(|l| l.ends_with(path)), "{path} not in the package:\n{listing}");
    }
    deb
}

/// Every path the installed plugd unit names (programs, documentation, man page) exists.
fn check_unit_paths() {
    let unit = std::fs::read_to_string("/usr/lib/systemd/system/racehorse-plugd.service").expect("unit");
    for line in unit.lines().filter(|l| !l.starts_with('#')) {
        let Some((key, value)) = line.split_once('=') else { continue };
        if key.starts_with("Exec") {
            let program = value.trim_start_matches(['-', '@', '+', '!']).split(' ').next().unwrap_or("");
            assert!(Path::new(program).is_file(), "{key}: {program} is not installed");
        } else if key == "Documentation" {
            for doc in value.split(' ') {
                if let Some(file) = doc.strip_prefix("file://") {
                    assert!(Path::new(file).is_file(), "Documentation: {file} is not installed");
                } else if let Some(page) = doc.strip_prefix("man:").and_then(|p| p.split('(').next()) {
                    ok(Command::new("man").args(["-w", page]).env_remove("MANPATH").output().unwrap(), page);
                }
            }
        }
    }
}

#[test]
fn the_deb_installs_runs_and_purges() {
    if let Some(why) = cannot_run() {
        assert!(
            std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(),
            "the package test must run here: {why}"
        );
        racehorse_testkit::skip!("{why}");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let deb = build_and_inspect(dir.path());

    let mut install = Command::new("dpkg");
    install.arg("-i");
    let cfg = dpkg_config();
    for (path, include) in [
        ("/usr/share/man/man1/racehorse.1.gz", "/usr/share/man/man1/racehorse*"),
        ("/usr/share/doc/racehorse/plugd.md", "/usr/share/doc/racehorse/*"),
    ] {
        let rules = excluding(&cfg, path);
        if !rules.is_empty() {
            eprintln!(
                "note: this machine's dpkg configuration excludes {path} ({}), as minimal container \
                 images do; installing with --path-include={include} so that the package's own files land",
                rules.join(", ")
            );
            install.arg(format!("--path-include={include}"));
        }
    }
    let purge = Purge;
    ok(install.arg(&deb).env("DEBIAN_FRONTEND", "noninteractive").output().unwrap(), "dpkg -i");

    let installed = ok(Command::new("/usr/bin/racehorse").arg("--version").output().unwrap(), "--version");
    let built = ok(Command::new(bin()).arg("--version").output().unwrap(), "--version");
    assert_eq!(installed, built);
    for page in ["racehorse", "racehorse-run", "racehorse-plugd"] {
        let found = ok(Command::new("man").args(["-w", page]).env_remove("MANPATH").output().unwrap(), page);
        assert_eq!(found.trim(), format!("/usr/share/man/man1/{page}.1.gz"));
    }
    let complete = Command::new("bash")
        .arg("-c")
        .arg("source /usr/share/bash-completion/completions/racehorse && complete -p racehorse")
        .output()
        .unwrap();
    assert!(ok(complete, "bash completion").contains("racehorse"));
    check_unit_paths();

    drop(purge);
    let status = Command::new("dpkg").args(["-s", "racehorse"]).output().unwrap();
    assert!(!status.status.success(), "purged: {}", text(&status));
    assert!(!Path::new("/usr/bin/racehorse").exists() && !Path::new("/usr/share/doc/racehorse").exists());
}

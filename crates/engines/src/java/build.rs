//! The Java program: its sources embedded in racehorse, compiled with the JDK's `javac` at
//! the first cell that needs them into a cache directory named by a hash of the sources and
//! the JDK (`$XDG_CACHE_HOME/racehorse/java/KEY`, else `~/.cache/…`), and reused by every
//! later cell and run. A build goes into a directory of its own and is renamed into place
//! when complete, so that a killed build or two racehorses building at once leave no half
//! cache behind.

use crate::support::jdk::Jdk;
use crate::EngineError;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The embedded sources (file name, text).
pub const SOURCES: &[(&str, &str)] = &[
    ("RhJava.java", include_str!("jsrc/RhJava.java")),
    ("Model.java", include_str!("jsrc/Model.java")),
    ("Txns.java", include_str!("jsrc/Txns.java")),
    ("Worker.java", include_str!("jsrc/Worker.java")),
    ("Check.java", include_str!("jsrc/Check.java")),
    ("Rand.java", include_str!("jsrc/Rand.java")),
];

/// The main class.
pub const MAIN_CLASS: &str = "RhJava";

/// The file a complete build holds beside its classes.
const COMPLETE: &str = "complete";

/// Where builds are cached: `$XDG_CACHE_HOME/racehorse/java`, `~/.cache/racehorse/java`, or
/// under the temporary directory when neither is set.
pub fn cache_root() -> PathBuf {
    let base = match (std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME")) {
        (Some(x), _) if !x.is_empty() => PathBuf::from(x),
        (_, Some(h)) if !h.is_empty() => PathBuf::from(h).join(".cache"),
        // SAFETY: geteuid has no preconditions.
        _ => std::env::temp_dir().join(format!("racehorse-cache-{}", unsafe { libc::geteuid() })),
    };
    base.join("racehorse/java")
}

/// The build's name: a hash of the sources, the JDK's version and its javac.
pub fn cache_key(jdk: &Jdk, javac: &Path) -> String {
    let mut h = Sha256::new();
    for (name, text) in SOURCES {
        h.update(name.as_bytes());
        h.update([0]);
        h.update(text.as_bytes());
        h.update([0]);
    }
    h.update(jdk.version.as_bytes());
    h.update([0]);
    h.update(javac.as_os_str().as_encoded_bytes());
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// What [`classes`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Build {
    /// The directory to put on the class path.
    pub classes: PathBuf,
    /// True when this call compiled them (false: found in the cache).
    pub compiled: bool,
}

/// The compiled program for `jdk`, from the cache under `root` or compiled into it now.
pub fn classes(jdk: &Jdk, root: &Path) -> Result<Build, EngineError> {
    let javac = jdk.javac()?;
    let dir = root.join(cache_key(jdk, javac));
    if dir.join(COMPLETE).is_file() {
        return Ok(Build { classes: dir.join("classes"), compiled: false });
    }
    std::fs::create_dir_all(root)
        .map_err(|e| EngineError::io("cannot create the Java build cache", root, e))?;
    let tmp = root.join(format!(".build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let result = compile(javac, &tmp).and_then(|()| {
        std::fs::write(tmp.join(COMPLETE), jdk.describe())
            .map_err(|e| EngineError::io("cannot write to the Java build cache", &tmp, e))
    });
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if let Err(e) = std::fs::rename(&tmp, &dir) {
        let _ = std::fs::remove_dir_all(&tmp);
        // Another racehorse finished the same build first: use it.
        if !dir.join(COMPLETE).is_file() {
            return Err(EngineError::io("cannot move the Java build into the cache", &dir, e));
        }
    }
    Ok(Build { classes: dir.join("classes"), compiled: true })
}

/// Writes the sources into `dir/src` and compiles them into `dir/classes`.
fn compile(javac: &Path, dir: &Path) -> Result<(), EngineError> {
    let src = dir.join("src");
    let out = dir.join("classes");
    for d in [&src, &out] {
        std::fs::create_dir_all(d)
            .map_err(|e| EngineError::io("cannot create a Java build directory", d, e))?;
    }
    let mut cmd = Command::new(javac);
    cmd.args(["-encoding", "UTF-8", "-nowarn", "-d"]).arg(&out);
    for (name, text) in SOURCES {
        let p = src.join(name);
        std::fs::write(&p, text).map_err(|e| EngineError::io("cannot write a Java source", &p, e))?;
        cmd.arg(p);
    }
    let done = cmd
        .output()
        .map_err(|e| EngineError::Failed(format!("java: cannot run {}: {e}", javac.display())))?;
    if !done.status.success() {
        return Err(EngineError::Failed(format!(
            "java: {} failed to compile the workload ({}):\n{}",
            javac.display(),
            done.status,
            crate::bounded_output(String::from_utf8_lossy(&done.stderr).trim())
        )));
    }
    Ok(())
}

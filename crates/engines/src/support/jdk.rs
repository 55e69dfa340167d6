//! The installed JDK: `java` and `javac` from `$JAVA_HOME/bin` when JAVA_HOME is set, else
//! from PATH; its version and vendor as the JVM itself reports them (`java
//! -XshowSettings:properties -version`, asked once per racehorse process and JDK); whether it
//! has a collector (a `java -XX:+UseXGC -version` probe, also asked once). Where there is no
//! JDK the error names the package to install. The java engine and the JMH adapter use it.

use crate::EngineError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// The Debian package that brings a headless JDK (java and javac).
pub const JDK_PACKAGE: &str = "openjdk-17-jdk-headless";

/// A JDK found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jdk {
    /// The `java` launcher.
    pub java: PathBuf,
    /// The `javac` compiler (None for a runtime without one).
    pub javac: Option<PathBuf>,
    /// `java.runtime.version`, e.g. `17.0.13+11-Debian-2deb12u1`.
    pub version: String,
    /// `java.vendor`, e.g. `Debian`, `Eclipse Adoptium`.
    pub vendor: String,
    /// `java.vm.name`, e.g. `OpenJDK 64-Bit Server VM`.
    pub vm: String,
}

impl Jdk {
    /// The JDK of `$JAVA_HOME`, else of PATH (see [`Jdk::find_in`]).
    pub fn find() -> Result<Jdk, EngineError> {
        Jdk::find_in(std::env::var_os("JAVA_HOME").map(PathBuf::from), crate::support::path::path_dirs())
    }

    /// The JDK whose home is `java_home` (when given and not empty), else the first `java`
    /// (and `javac`) found in `path_dirs`; a refusal naming [`JDK_PACKAGE`] when there is none.
    pub fn find_in(java_home: Option<PathBuf>, path_dirs: Vec<PathBuf>) -> Result<Jdk, EngineError> {
        let exe = crate::support::path::is_executable;
        let (java, javac) = match java_home.filter(|h| !h.as_os_str().is_empty()) {
            Some(home) => {
                let java = home.join("bin/java");
                if !exe(&java) {
                    return Err(missing(&format!(
                        "JAVA_HOME={} holds no bin/java; point JAVA_HOME at a JDK or unset it",
                        home.display()
                    )));
                }
                let javac = Some(home.join("bin/javac")).filter(|p| exe(p));
                (java, javac)
            }
            None => {
                let java = crate::support::path::find_in(path_dirs.clone(), "java", exe)
                    .ok_or_else(|| missing("there is no java on PATH and JAVA_HOME is not set"))?;
                (java, crate::support::path::find_in(path_dirs, "javac", exe))
            }
        };
        let props = properties(&java)?;
        let get = |k: &str| props.get(k).cloned().unwrap_or_else(|| "unknown".into());
        Ok(Jdk {
            version: get("java.runtime.version"),
            vendor: get("java.vendor"),
            vm: get("java.vm.name"),
            java,
            javac,
        })
    }

    /// `javac`, or a refusal naming [`JDK_PACKAGE`] (a runtime without the compiler).
    pub fn javac(&self) -> Result<&Path, EngineError> {
        self.javac.as_deref().ok_or_else(|| {
            missing(&format!("{} has no javac beside it (a runtime, not a JDK)", self.java.display()))
        })
    }

    /// One line for settings and the environment: `17.0.13+11-Debian-2deb12u1 (Debian, OpenJDK
    /// 64-Bit Server VM)`.
    pub fn describe(&self) -> String {
        format!("{} ({}, {})", self.version, self.vendor, self.vm)
    }

    /// None when this JVM starts with `-XX:+Use<name>` (e.g. `ZGC`), else what it said.
    pub fn lacks_gc(&self, name: &str) -> Option<String> {
        let key = format!("gc {name} {}", self.java.display());
        let answer = memo(key, || {
            match Command::new(&self.java).arg(format!("-XX:+Use{name}")).arg("-version").output() {
                Ok(o) if o.status.success() => String::new(),
                Ok(o) => {
                    let text = String::from_utf8_lossy(&o.stderr).into_owned();
                    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
                    if first.is_empty() {
                        format!("it exits with {}", o.status)
                    } else {
                        first
                    }
                }
                Err(e) => format!("cannot run it: {e}"),
            }
        });
        (!answer.is_empty()).then_some(answer)
    }
}

/// The refusal when no usable JDK is found: what was wrong and the package to install.
fn missing(why: &str) -> EngineError {
    EngineError::ToolMissing {
        tool: "java".into(),
        hint: format!(
            "no JDK found ({why}); install one (Debian/Ubuntu: apt-get install {JDK_PACKAGE}) or set \
             JAVA_HOME to a JDK's directory"
        ),
    }
}

/// Answers per JDK, asked once per racehorse process (a JVM takes a large part of a second to
/// start).
fn memo(key: String, ask: impl FnOnce() -> String) -> String {
    static DONE: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    done.get_or_insert_with(HashMap::new).entry(key).or_insert_with(ask).clone()
}

/// The system properties `java -XshowSettings:properties -version` prints (on stderr).
fn properties(java: &Path) -> Result<HashMap<String, String>, EngineError> {
    let text = memo(format!("properties {}", java.display()), || {
        match Command::new(java).args(["-XshowSettings:properties", "-version"]).stdin(Stdio::null()).output()
        {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stderr).into_owned(),
            Ok(o) => format!("\u{0}{} exits with {}", java.display(), o.status),
            Err(e) => format!("\u{0}cannot run {}: {e}", java.display()),
        }
    });
    if let Some(why) = text.strip_prefix('\u{0}') {
        return Err(missing(why));
    }
    Ok(parse_properties(&text))
}

/// `key = value` lines of `-XshowSettings:properties` (indented; multi-line values such as
/// `java.library.path` keep their first line).
pub fn parse_properties(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.trim().split_once(" = "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTINGS: &str = "Property settings:\n    file.encoding = UTF-8\n    java.library.path = /usr/java/packages/lib\n        /usr/lib64\n    java.runtime.version = 17.0.13+11-Debian-2deb12u1\n    java.vendor = Debian\n    java.vm.name = OpenJDK 64-Bit Server VM\n\nopenjdk version \"17.0.13\" 2024-10-15\n";

    #[test]
    fn properties_parse() {
        let p = parse_properties(SETTINGS);
        assert_eq!(p["java.runtime.version"], "17.0.13+11-Debian-2deb12u1");
        assert_eq!(p["java.vendor"], "Debian");
        assert_eq!(p["java.vm.name"], "OpenJDK 64-Bit Server VM");
        assert_eq!(p["java.library.path"], "/usr/java/packages/lib");
    }

    #[test]
    fn no_jdk_is_a_refusal_naming_the_package() {
        let empty = tempfile::tempdir().unwrap();
        let e = Jdk::find_in(None, vec![empty.path().to_path_buf()]).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, EngineError::ToolMissing { .. }), "{e:?}");
        assert!(text.contains(JDK_PACKAGE) && text.contains("JAVA_HOME"), "{text}");
        let e = Jdk::find_in(Some(empty.path().to_path_buf()), Vec::new()).unwrap_err();
        assert!(e.to_string().contains("holds no bin/java") && e.to_string().contains(JDK_PACKAGE), "{e}");
    }

    #[test]
    fn a_jdk_says_its_version_and_vendor() {
        let Ok(jdk) = Jdk::find() else {
            assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "a JDK is required here");
            eprintln!("SKIPPED: no JDK installed here (CI installs {JDK_PACKAGE})");
            return;
        };
        assert!(jdk.version.chars().next().is_some_and(|c| c.is_ascii_digit()), "{jdk:?}");
        assert_ne!(jdk.vendor, "unknown", "{jdk:?}");
        assert!(jdk.javac().is_ok(), "{jdk:?}");
        assert_eq!(jdk.lacks_gc("SerialGC"), None);
        assert!(jdk.lacks_gc("NoSuchCollectorGC").is_some_and(|why| !why.is_empty()));
    }
}

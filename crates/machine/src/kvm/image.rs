//! The guest image, built at run time from what is installed: the newest kernel in /boot
//! (a Debian linux-image package) and an initramfs written here (newc cpio) that holds the
//! racehorse binary (debug information stripped), the shared libraries `ldd` names, the
//! kernel modules the result channel needs with their dependencies from modules.dep, and a
//! device node for the first console. racehorse is the guest's init (`guest-init`). The
//! initramfs is cached by a hash of everything in it; nothing is downloaded.

use super::cpio::{Entry, Writer};
use std::collections::BTreeSet;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Modules the guest loads (when they are not built in): the PCI transport and the
/// virtio-serial driver of the result channel.
pub const GUEST_MODULES: &[&str] = &["virtio_pci", "virtio_console"];

/// Where racehorse lives in the guest; the kernel starts it as init with `guest-init`.
pub const GUEST_EXE: &str = "racehorse";

/// The file in the guest's initramfs listing the modules to load, in order.
pub const MODULES_LIST: &str = "modules.load";

/// A kernel and the initramfs for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestImage {
    pub kernel: PathBuf,
    pub kernel_version: String,
    pub initramfs: PathBuf,
    /// Whether this call wrote the initramfs (false: it came from the cache).
    pub built: bool,
}

/// The guest kernel: $RACEHORSE_GUEST_KERNEL when set, else the newest /boot/vmlinuz-*.
/// Returns the file and its version (the name after `vmlinuz-`).
pub fn find_kernel() -> Result<(PathBuf, String), String> {
    if let Some(k) = std::env::var_os("RACEHORSE_GUEST_KERNEL").filter(|k| !k.is_empty()) {
        let k = PathBuf::from(k);
        let name = k.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let version = name.strip_prefix("vmlinuz-").unwrap_or(&name).to_string();
        return Ok((k, version));
    }
    let rd = std::fs::read_dir("/boot").map_err(|e| format!("/boot: {e}; {INSTALL_KERNEL}"))?;
    let mut found: Vec<(Vec<u64>, String, PathBuf)> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version = name.strip_prefix("vmlinuz-")?.to_string();
            let key = version.split(|c: char| !c.is_ascii_digit()).filter_map(|p| p.parse().ok()).collect();
            Some((key, version, e.path()))
        })
        .collect();
    found.sort();
    let (_, version, path) = found.pop().ok_or_else(|| format!("no /boot/vmlinuz-*; {INSTALL_KERNEL}"))?;
    Ok((path, version))
}

const INSTALL_KERNEL: &str =
    "install a Debian kernel for the guest (apt-get install linux-image-cloud-amd64) or set RACEHORSE_GUEST_KERNEL";

/// racehorse's cache of guest images: $RACEHORSE_CACHE_DIR, else $XDG_CACHE_HOME/racehorse,
/// else ~/.cache/racehorse, with `guest/` below it.
pub fn cache_dir() -> PathBuf {
    let var = |n: &str| std::env::var_os(n).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = var("RACEHORSE_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|x| x.join("racehorse")))
        .or_else(|| var("HOME").map(|h| h.join(".cache/racehorse")))
        .unwrap_or_else(|| std::env::temp_dir().join("racehorse-cache"));
    base.join("guest")
}

/// One file of the image: where it goes (no leading '/') and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Member {
    name: String,
    source: PathBuf,
}

/// The shared libraries and the program interpreter `ldd` lists for `exe`.
fn libraries(exe: &Path) -> Result<Vec<Member>, String> {
    let out = Command::new("ldd").arg(exe).output().map_err(|e| format!("ldd {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!("ldd {}: {}", exe.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(parse_ldd(&String::from_utf8_lossy(&out.stdout)))
}

/// `libm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x…)` and `/lib64/ld-linux-x86-64.so.2
/// (0x…)` become members at those paths; the vDSO has no file.
fn parse_ldd(text: &str) -> Vec<Member> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let path = match l.split_once("=>") {
                Some((_, rest)) => rest.split_whitespace().next()?,
                None => l.split_whitespace().next()?,
            };
            path.starts_with('/').then(|| Member { name: path[1..].to_string(), source: PathBuf::from(path) })
        })
        .collect()
}

/// A module's name from its file (`kernel/drivers/char/virtio_console.ko.xz` →
/// `virtio_console`), with '-' read as '_' as modprobe does.
fn module_name(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.split(".ko").next().unwrap_or(file).replace('-', "_")
}

/// The modules files (relative to the modules directory) to load for `wanted`, each after
/// the modules it depends on, from the text of modules.dep. Names absent from it are built
/// into the kernel (or missing: QEMU's device then never appears and the guest says so).
fn module_order(modules_dep: &str, wanted: &[&str]) -> Vec<String> {
    let deps: std::collections::BTreeMap<String, (String, Vec<String>)> = modules_dep
        .lines()
        .filter_map(|l| {
            let (file, rest) = l.split_once(':')?;
            let needs = rest.split_whitespace().map(str::to_string).collect();
            Some((module_name(file), (file.to_string(), needs)))
        })
        .collect();
    fn visit(
        name: &str,
        deps: &std::collections::BTreeMap<String, (String, Vec<String>)>,
        seen: &mut BTreeSet<String>,
        out: &mut Vec<String>,
    ) {
        let Some((file, needs)) = deps.get(name) else { return };
        if !seen.insert(name.to_string()) {
            return;
        }
        for n in needs {
            visit(&module_name(n), deps, seen, out);
        }
        out.push(file.clone());
    }
    let (mut seen, mut out) = (BTreeSet::new(), Vec::new());
    for w in wanted {
        visit(&w.replace('-', "_"), &deps, &mut seen, &mut out);
    }
    out
}

/// A module file's bytes, decompressed (xz or zstd) so that any kernel can load it.
fn module_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let name = path.to_string_lossy();
    let tool = if name.ends_with(".xz") {
        Some("xz")
    } else if name.ends_with(".zst") {
        Some("zstd")
    } else {
        None
    };
    let Some(tool) = tool else { return std::fs::read(path).map_err(|e| format!("{name}: {e}")) };
    let out =
        Command::new(tool).arg("-dc").arg(path).output().map_err(|e| format!("{tool} -dc {name}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{tool} -dc {name}: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(out.stdout)
}

/// The executable without its debug information (`objcopy --strip-debug`), or as it is when
/// objcopy is missing or fails: a debug build is hundreds of MiB the guest would hold in RAM.
fn stripped_exe(exe: &Path, scratch: &Path) -> Result<Vec<u8>, String> {
    let out = scratch.with_extension("exe.tmp");
    let ok = Command::new("objcopy")
        .arg("--strip-debug")
        .arg(exe)
        .arg(&out)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    let bytes = if ok { std::fs::read(&out) } else { std::fs::read(exe) };
    let _ = std::fs::remove_file(&out);
    bytes.map_err(|e| format!("{}: {e}", exe.display()))
}

/// Everything the initramfs holds besides racehorse: libraries and modules.
struct Contents {
    libs: Vec<Member>,
    modules: Vec<Member>,
}

fn contents(exe: &Path, kernel_version: &str) -> Result<Contents, String> {
    let libs = libraries(exe)?;
    let dir = Path::new("/lib/modules").join(kernel_version);
    let dep = std::fs::read_to_string(dir.join("modules.dep")).unwrap_or_default();
    let modules = module_order(&dep, GUEST_MODULES)
        .into_iter()
        .map(|f| Member { name: format!("lib/modules/{}.ko", module_name(&f)), source: dir.join(&f) })
        .collect();
    Ok(Contents { libs, modules })
}

/// A hash of the files' contents (and the image layout's version), naming the cache entry.
fn content_hash(exe: &Path, kernel_version: &str, c: &Contents) -> Result<String, String> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(b"racehorse-guest-initramfs-v1");
    h.write(kernel_version.as_bytes());
    for p in std::iter::once(exe).chain(c.libs.iter().chain(&c.modules).map(|m| m.source.as_path())) {
        let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
        h.write(p.to_string_lossy().as_bytes());
        h.write(&bytes);
    }
    Ok(format!("{:016x}", h.finish()))
}

/// Adds every parent directory of `name` not added yet.
fn add_parents<W: std::io::Write>(
    w: &mut Writer<W>,
    dirs: &mut BTreeSet<String>,
    name: &str,
) -> std::io::Result<()> {
    let mut at = 0;
    while let Some(i) = name[at..].find('/') {
        let dir = &name[..at + i];
        if dirs.insert(dir.to_string()) {
            w.add(dir, Entry::Dir)?;
        }
        at += i + 1;
    }
    Ok(())
}

const ETC: &[(&str, &str)] = &[
    ("etc/hosts", "127.0.0.1 localhost\n::1 localhost\n"),
    ("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"),
    ("etc/group", "root:x:0:\n"),
];

fn write_initramfs(path: &Path, exe: &[u8], c: &Contents) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    let file = std::fs::File::create(path).map_err(io)?;
    let mut w = Writer::new(std::io::BufWriter::new(file));
    let mut dirs = BTreeSet::new();
    for d in ["dev", "proc", "sys", "tmp", "run", "root", "etc", "lib/modules"] {
        add_parents(&mut w, &mut dirs, &format!("{d}/")).map_err(io)?;
    }
    w.add("dev/console", Entry::CharDev { major: 5, minor: 1 }).map_err(io)?;
    w.add(GUEST_EXE, Entry::File { data: exe, executable: true }).map_err(io)?;
    for (name, text) in ETC {
        w.add(name, Entry::File { data: text.as_bytes(), executable: false }).map_err(io)?;
    }
    for m in &c.libs {
        let data = std::fs::read(&m.source).map_err(|e| format!("{}: {e}", m.source.display()))?;
        add_parents(&mut w, &mut dirs, &m.name).map_err(io)?;
        w.add(&m.name, Entry::File { data: &data, executable: true }).map_err(io)?;
    }
    let mut list = String::new();
    for m in &c.modules {
        let data = module_bytes(&m.source)?;
        w.add(&m.name, Entry::File { data: &data, executable: false }).map_err(io)?;
        list.push_str(&format!("/{}\n", m.name));
    }
    w.add(MODULES_LIST, Entry::File { data: list.as_bytes(), executable: false }).map_err(io)?;
    w.finish().map_err(io)?;
    Ok(())
}

/// The image for racehorse binary `exe` with the newest installed kernel: the cached
/// initramfs when one with the same contents exists, else a new one written into `cache`.
pub fn ensure(cache: &Path, exe: &Path) -> Result<GuestImage, String> {
    let (kernel, kernel_version) = find_kernel()?;
    let c = contents(exe, &kernel_version)?;
    let hash = content_hash(exe, &kernel_version, &c)?;
    let initramfs = cache.join(format!("initramfs-{kernel_version}-{hash}.cpio"));
    if initramfs.is_file() {
        return Ok(GuestImage { kernel, kernel_version, initramfs, built: false });
    }
    std::fs::create_dir_all(cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    let tmp = cache.join(format!(".initramfs.tmp.{}", std::process::id()));
    let exe_bytes = stripped_exe(exe, &tmp)?;
    let written = write_initramfs(&tmp, &exe_bytes, &c).and_then(|()| {
        std::fs::rename(&tmp, &initramfs).map_err(|e| format!("{}: {e}", initramfs.display()))
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    Ok(GuestImage { kernel, kernel_version, initramfs, built: true })
}

/// A second archive, appended to the image for one guest: `name` holding `data` (the job).
pub fn job_archive(name: &str, data: &[u8]) -> Result<Vec<u8>, String> {
    let mut w = Writer::new(Vec::new());
    w.add(name, Entry::File { data, executable: false }).map_err(|e| e.to_string())?;
    w.finish().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_output_becomes_members_at_their_paths() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 \
                    (0x00007f)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n\t\
                    /lib64/ld-linux-x86-64.so.2 (0x00007f)\n";
        let names: Vec<String> = parse_ldd(text).into_iter().map(|m| m.name).collect();
        assert_eq!(
            names,
            [
                "lib/x86_64-linux-gnu/libgcc_s.so.1",
                "lib/x86_64-linux-gnu/libc.so.6",
                "lib64/ld-linux-x86-64.so.2"
            ]
        );
    }

    #[test]
    fn modules_load_after_their_dependencies_and_built_ins_are_skipped() {
        let dep = "kernel/drivers/char/virtio_console.ko.xz: kernel/drivers/virtio/virtio_ring.ko.xz \
                   kernel/drivers/virtio/virtio.ko.xz\n\
                   kernel/drivers/virtio/virtio_ring.ko.xz: kernel/drivers/virtio/virtio.ko.xz\n\
                   kernel/drivers/virtio/virtio.ko.xz:\n\
                   kernel/fs/ext4/ext4.ko:\n";
        let order = module_order(dep, &["virtio_pci", "virtio-console"]);
        let names: Vec<String> = order.iter().map(|f| module_name(f)).collect();
        assert_eq!(names, ["virtio", "virtio_ring", "virtio_console"], "virtio_pci is built in here");
    }

    #[test]
    fn the_job_archive_is_one_file_and_a_trailer() {
        let a = job_archive("job.json", b"{}").unwrap();
        let text = String::from_utf8_lossy(&a);
        assert!(text.starts_with("070701") && text.contains("job.json") && text.contains("TRAILER!!!"));
    }
}

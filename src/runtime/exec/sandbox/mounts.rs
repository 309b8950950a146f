//! Building the view (Linux): [`prepare`] runs in the shim, in the host's mount namespace,
//! and resolves the view against the host (see [`prepare`](super::prepare)); [`enter`] runs in
//! the tool's process (or its init) after `unshare(CLONE_NEWNS)` and builds the view the way
//! bubblewrap does:
//!
//! 1. every mount private (nothing propagates back to the host);
//! 2. a small tmpfs over `/tmp` becomes the root for a moment (`pivot_root`), with the host's
//!    root under `/oldroot` and the view's root under `/newroot`;
//! 3. the view's root: an empty tmpfs, or the host's root bound (read-only, recursively);
//! 4. the private `/tmp`, a minimal `/dev` (null, zero, full, random, urandom, tty, the
//!    `/proc/self/fd` links, a private `shm` and `pts` — never a block device), a fresh
//!    `/proc` for the PID namespace with `sys`, `sysrq-trigger`, `irq` and `bus` read-only;
//! 5. the read-only and writable binds, parents first;
//! 6. `.git` read-only, the masks (an empty read-only file or folder over each protected
//!    match, the state folder, the host's and the toolchains' secrets);
//! 7. the links of the system folders (`/bin` → `usr/bin`), the root read-only, then
//!    `pivot_root` into it and the host's root detached.
//!
//! Every step that fails fails the whole view (the caller fails closed, or runs without it
//! under `best_effort`), except a mask whose path vanished since the walk and the `pts`
//! instance, which some kernels refuse in a user namespace.

use std::ffi::CStr;
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{StatVfsMountFlags, statvfs};
use rustix::mount::{
    MountFlags, MountPropagationFlags, UnmountFlags, mount, mount_bind, mount_bind_recursive,
    mount_change, mount_remount, unmount,
};

use super::prepare::mount_points;
pub(super) use super::prepare::{Prepared, prepare};
use super::view::ViewBase;

/// Host folders the setup tmpfs may be mounted on (in the private mount namespace only): the
/// first that is a real folder.
const SETUP: &[&str] = &["/tmp", "/mnt", "/run", "/var/tmp"];
/// Where the host's root is during setup.
const OLD: &str = "/oldroot";
/// Where the view's root is during setup.
const NEW: &str = "/newroot";
/// The empty file and folder the masks are made of (on the setup tmpfs).
const EMPTY_FILE: &str = "/empty";
const EMPTY_DIR: &str = "/emptydir";
/// The devices of the minimal `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];
/// The links of the minimal `/dev`.
const DEV_LINKS: &[(&str, &str)] = &[
    ("fd", "/proc/self/fd"),
    ("stdin", "/proc/self/fd/0"),
    ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"),
    ("ptmx", "pts/ptmx"),
];
/// The parts of a fresh `/proc` that are made read-only (kernel settings and triggers).
const PROC_READ_ONLY: &[&str] = &["sys", "sysrq-trigger", "irq", "bus"];

/// A view that could not be built: the step and why.
#[derive(Debug, thiserror::Error)]
#[error("{step}: {source}")]
pub(super) struct ViewError {
    step: String,
    #[source]
    source: io::Error,
}

fn step<E: Into<io::Error>>(what: impl FnOnce() -> String) -> impl FnOnce(E) -> ViewError {
    move |e| ViewError {
        step: what(),
        source: e.into(),
    }
}

/// What [`enter`] put in force.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Built {
    /// Masks applied.
    pub(super) masked: u32,
    /// Whether every `.git` is read-only.
    pub(super) git_read_only: bool,
}

/// `NEW` + an absolute path.
fn new(p: &Path) -> PathBuf {
    Path::new(NEW).join(p.strip_prefix("/").unwrap_or(p))
}

/// `OLD` + an absolute path.
fn old(p: &Path) -> PathBuf {
    Path::new(OLD).join(p.strip_prefix("/").unwrap_or(p))
}

fn tmpfs(target: &Path, options: &str, flags: MountFlags) -> Result<(), ViewError> {
    let data = std::ffi::CString::new(options).map_err(step(|| "tmpfs options".to_owned()))?;
    mount("tmpfs", target, "tmpfs", flags, Some(data.as_c_str()))
        .map_err(step(|| format!("mount a tmpfs on {}", target.display())))
}

/// The per-mount flags to keep when a mount is remounted (a user namespace may not drop them).
fn kept_flags(target: &Path) -> MountFlags {
    let Ok(st) = statvfs(target) else {
        return MountFlags::empty();
    };
    let table = [
        (StatVfsMountFlags::NOSUID, MountFlags::NOSUID),
        (StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
        (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
        (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
        (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
    ];
    table
        .iter()
        .filter(|(s, _)| st.f_flag.contains(*s))
        .fold(MountFlags::empty(), |acc, (_, m)| acc | *m)
}

/// Remounts one bind mount read-only.
fn read_only(target: &Path) -> Result<(), ViewError> {
    let flags = MountFlags::BIND | MountFlags::RDONLY | kept_flags(target);
    mount_remount(target, flags, "")
        .map_err(step(|| format!("make {} read-only", target.display())))
}

/// The mount points beneath `prefix` (itself excluded), from the host's procfs.
fn submounts(prefix: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(old(Path::new("/proc/self/mountinfo"))).unwrap_or_default();
    mount_points(&text)
        .into_iter()
        .filter(|p| p != prefix && p.starts_with(prefix))
        .collect()
}

/// Binds a host folder (recursively) at the same path in the view, read-only unless asked
/// (and then its submounts too, when it has any).
fn bind_folder(host: &Path, writable: bool, nested: bool) -> Result<(), ViewError> {
    let target = new(host);
    mount_bind_recursive(old(host), &target)
        .map_err(step(|| format!("bind {}", host.display())))?;
    if !writable {
        read_only(&target)?;
        if !nested {
            return Ok(());
        }
        for sub in submounts(&target) {
            // A submount that went away meanwhile, or one the kernel keeps as it is, is
            // still beneath a read-only parent only if we managed; fail on real errors.
            match read_only(&sub) {
                Ok(()) => {}
                Err(e) if e.source.raw_os_error() == Some(nix::libc::ENOENT) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// The mounts of the view so far, by their path under `NEW`: whether each is the view's own
/// (a tmpfs it made, where folders may be created) or a host folder's (where nothing may be).
#[derive(Debug, Default)]
struct Owners(Vec<(PathBuf, bool)>);

impl Owners {
    fn add(&mut self, at: PathBuf, own: bool) {
        self.0.push((at, own));
    }

    /// Whether folders may be made at `path`: the deepest mount holding it is the view's own.
    fn owns(&self, path: &Path) -> bool {
        self.0
            .iter()
            .filter(|(m, _)| path.starts_with(m))
            .max_by_key(|(m, _)| m.components().count())
            .is_some_and(|(_, own)| *own)
    }
}

/// Makes the folders up to `path` in the view where the view owns them (its own tmpfs);
/// never inside a bind of a host folder.
fn make_dirs(path: &Path, owners: &Owners) -> Result<(), ViewError> {
    if path.exists() {
        return Ok(());
    }
    let mut missing = Vec::new();
    let mut cur = path.to_path_buf();
    while !cur.exists() {
        missing.push(cur.clone());
        if !cur.pop() {
            break;
        }
    }
    if !owners.owns(&cur) {
        return Err(ViewError {
            step: format!("{} does not exist", path.display()),
            source: io::Error::from(io::ErrorKind::NotFound),
        });
    }
    for d in missing.iter().rev() {
        std::fs::create_dir(d).map_err(step(|| format!("make {}", d.display())))?;
        let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755));
    }
    Ok(())
}

/// An empty file to mount on (in a folder the view owns).
fn make_file(path: &Path) -> Result<(), ViewError> {
    if path.exists() {
        return Ok(());
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o444)
        .open(path)
        .map(drop)
        .map_err(step(|| format!("make {}", path.display())))
}

fn is_vanished(e: &ViewError) -> bool {
    matches!(
        e.source.raw_os_error(),
        Some(nix::libc::ENOENT | nix::libc::ENOTDIR)
    )
}

/// Builds the view and makes it the root of the calling process (which has just unshared its
/// mount namespace), then changes to `cwd`.
pub(super) fn enter(p: &Prepared, cwd: &Path) -> Result<Built, ViewError> {
    let v = &p.view;
    let nothing: Option<&CStr> = None;
    mount_change(
        "/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    )
    .map_err(step(|| "make every mount private".to_owned()))?;
    let setup = SETUP
        .iter()
        .map(Path::new)
        .find(|d| std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir()))
        .ok_or_else(|| ViewError {
            step: format!("find a folder to set up in (one of {})", SETUP.join(", ")),
            source: io::Error::from(io::ErrorKind::NotFound),
        })?;
    tmpfs(
        setup,
        "mode=0700,size=1m",
        MountFlags::NOSUID | MountFlags::NODEV,
    )?;
    for d in ["newroot", "oldroot", "emptydir"] {
        std::fs::create_dir(setup.join(d))
            .map_err(step(|| format!("make the setup folder {d}")))?;
    }
    std::fs::set_permissions(
        setup.join("emptydir"),
        std::fs::Permissions::from_mode(0o555),
    )
    .map_err(step(|| "the empty folder's mode".to_owned()))?;
    make_file(&setup.join("empty"))?;
    rustix::process::pivot_root(setup, setup.join("oldroot"))
        .map_err(step(|| "enter the setup root".to_owned()))?;
    std::env::set_current_dir("/").map_err(step(|| "change to /".to_owned()))?;

    // The view's root.
    let root = Path::new(NEW);
    match v.base {
        ViewBase::Empty => tmpfs(
            root,
            "mode=0755,size=1m",
            MountFlags::NOSUID | MountFlags::NODEV,
        )?,
        ViewBase::HostReadOnly => bind_folder(Path::new("/"), false, true)?,
        ViewBase::HostWritable => bind_folder(Path::new("/"), true, true)?,
    }
    let mut owners = Owners::default();
    owners.add(root.to_path_buf(), v.base == ViewBase::Empty);

    // /tmp, /dev, /proc.
    let size = v.tmp_size.map(|s| format!(",size={s}")).unwrap_or_default();
    if v.private_tmp.is_some() {
        let t = new(Path::new("/tmp"));
        make_dirs(&t, &owners)?;
        tmpfs(
            &t,
            &format!("mode=1777{size}"),
            MountFlags::NOSUID | MountFlags::NODEV,
        )?;
        owners.add(t, true);
    }
    let dev = new(Path::new("/dev"));
    make_dirs(&dev, &owners)?;
    tmpfs(
        &dev,
        "mode=0755,size=64k",
        MountFlags::NOSUID | MountFlags::NOEXEC,
    )?;
    owners.add(dev.clone(), true);
    for d in DEVICES {
        let source = old(&Path::new("/dev").join(d));
        if !source.exists() {
            // A host without it (a container without a terminal): the view has none either.
            continue;
        }
        let target = dev.join(d);
        make_file(&target)?;
        mount_bind(&source, &target).map_err(step(|| format!("bind /dev/{d}")))?;
    }
    for (name, target) in DEV_LINKS {
        std::os::unix::fs::symlink(target, dev.join(name))
            .map_err(step(|| format!("link /dev/{name}")))?;
    }
    let shm = dev.join("shm");
    std::fs::create_dir(&shm).map_err(step(|| "make /dev/shm".to_owned()))?;
    tmpfs(
        &shm,
        &format!("mode=1777{size}"),
        MountFlags::NOSUID | MountFlags::NODEV,
    )?;
    let pts = dev.join("pts");
    std::fs::create_dir(&pts).map_err(step(|| "make /dev/pts".to_owned()))?;
    // A terminal of its own is a convenience: some kernels refuse a devpts instance in a user
    // namespace, and the tool then has none.
    if let Ok(data) = std::ffi::CString::new("newinstance,ptmxmode=0666,mode=620") {
        let _ = mount(
            "devpts",
            &pts,
            "devpts",
            MountFlags::NOSUID | MountFlags::NOEXEC,
            Some(data.as_c_str()),
        );
    }
    let proc_dir = new(Path::new("/proc"));
    if v.fresh_proc {
        make_dirs(&proc_dir, &owners)?;
        mount(
            "proc",
            &proc_dir,
            "proc",
            MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
            nothing,
        )
        .map_err(step(|| "mount a fresh /proc".to_owned()))?;
        for sub in PROC_READ_ONLY {
            let s = proc_dir.join(sub);
            if s.exists() {
                mount_bind(&s, &s).map_err(step(|| format!("bind /proc/{sub}")))?;
                read_only(&s)?;
            }
        }
    } else if v.base == ViewBase::Empty {
        make_dirs(&proc_dir, &owners)?;
        bind_folder(Path::new("/proc"), false, true)?;
    }
    owners.add(proc_dir, false);

    // The binds, parents first.
    for b in &p.binds {
        let target = new(&b.path);
        make_dirs(&target, &owners)?;
        bind_folder(&b.path, b.writable, b.nested)?;
        owners.add(target, false);
    }

    // .git read-only, then the masks; parents first.
    let mut overlays: Vec<(&Path, u8)> = p
        .git
        .iter()
        .map(|(g, dir)| (g.as_path(), u8::from(*dir)))
        .chain(
            p.masks
                .iter()
                .map(|m| (m.path.as_path(), 2 + u8::from(m.folder))),
        )
        .collect();
    overlays.sort_by_key(|(path, _)| path.components().count());
    let mut masked = 0u32;
    for (path, kind) in overlays {
        let target = new(path);
        let result = match kind {
            // .git: a file or a folder bound onto itself, read-only.
            0 | 1 => mount_bind(old(path), &target)
                .map_err(step(|| format!("bind {}", path.display())))
                .and_then(|()| read_only(&target)),
            _ => {
                let source = if kind == 3 { EMPTY_DIR } else { EMPTY_FILE };
                mount_bind(source, &target)
                    .map_err(step(|| format!("mask {}", path.display())))
                    .and_then(|()| read_only(&target))
            }
        };
        match result {
            Ok(()) if kind >= 2 => masked += 1,
            Ok(()) => {}
            // Gone (or changed kind) since the walk: nothing there to hide or protect.
            Err(e) if is_vanished(&e) => {}
            Err(e) => return Err(e),
        }
    }

    // Links of the host's layout, then everything the view owns read-only.
    for (at, target) in &p.links {
        let at = new(at);
        if at.exists() || std::fs::symlink_metadata(&at).is_ok() {
            continue;
        }
        if let Some(parent) = at.parent() {
            make_dirs(parent, &owners)?;
        }
        std::os::unix::fs::symlink(target, &at)
            .map_err(step(|| format!("link {}", at.display())))?;
    }
    mount_remount(
        &dev,
        MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NOEXEC,
        "",
    )
    .map_err(step(|| "make /dev read-only".to_owned()))?;
    if v.private_tmp == Some(false) {
        let t = new(Path::new("/tmp"));
        mount_remount(
            &t,
            MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
            "",
        )
        .map_err(step(|| "make /tmp read-only".to_owned()))?;
    }
    if v.base == ViewBase::Empty {
        mount_remount(
            root,
            MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
            "",
        )
        .map_err(step(|| "make the root read-only".to_owned()))?;
    }

    // The view becomes the root; the host's is detached.
    std::env::set_current_dir(root).map_err(step(|| "change to the view".to_owned()))?;
    rustix::process::pivot_root(".", ".").map_err(step(|| "enter the view".to_owned()))?;
    unmount(".", UnmountFlags::DETACH).map_err(step(|| "detach the host's root".to_owned()))?;
    std::env::set_current_dir("/").map_err(step(|| "change to /".to_owned()))?;
    std::env::set_current_dir(cwd).map_err(step(|| {
        format!("change to the working folder {}", cwd.display())
    }))?;
    Ok(Built {
        masked,
        git_read_only: v.git_read_only,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_views_own_folders_are_made() {
        let mut o = Owners::default();
        o.add(PathBuf::from("/newroot"), true);
        o.add(PathBuf::from("/newroot/usr"), false);
        assert!(o.owns(Path::new("/newroot/root")));
        assert!(!o.owns(Path::new("/newroot/usr/local")));
        o.add(PathBuf::from("/newroot/usr/local/tmp"), true);
        assert!(o.owns(Path::new("/newroot/usr/local/tmp/x")));
    }
}

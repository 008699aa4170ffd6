//! The per-user runtime directory every yazses process of one user shares.
//!
//! Resolution: `$YAZSES_RUNTIME_DIR` as given; else `$XDG_RUNTIME_DIR/yazses`; else
//! `/run/user/<uid>/yazses` when the session manager made that directory (a server started
//! by an MCP client with a trimmed environment must still meet the others); else
//! `<temp>/yazses-<uid>`. It is created 0700 and refused when it belongs to another user,
//! is writable by others, or is not a plain directory (a symlink planted in `/tmp`).

use std::path::{Path, PathBuf};

use super::CoordError;

/// A checked runtime directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeDir {
    path: PathBuf,
}

impl RuntimeDir {
    /// The directory the environment names (see the module docs), created and checked.
    pub fn from_env() -> Result<RuntimeDir, CoordError> {
        RuntimeDir::at(&resolve(
            std::env::var_os("YAZSES_RUNTIME_DIR").map(PathBuf::from),
            std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
        ))
    }

    /// `path`, created 0700 if missing, then checked.
    pub fn at(path: &Path) -> Result<RuntimeDir, CoordError> {
        let bad = |why: String| CoordError::RuntimeDir {
            path: path.to_owned(),
            why,
        };
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                crate::platform::create_private_dir(path)
                    .map_err(|e| bad(format!("it could not be created ({e})")))?;
            }
            Err(e) => return Err(bad(format!("it could not be examined ({e})"))),
            Ok(_) => {}
        }
        let meta =
            std::fs::symlink_metadata(path).map_err(|e| bad(format!("it vanished ({e})")))?;
        if !meta.file_type().is_dir() {
            return Err(bad(
                "it is not a directory (a symlink or a file is refused)".into(),
            ));
        }
        if let Some(why) = crate::platform::unfit_private_dir(&meta, path) {
            return Err(bad(why));
        }
        Ok(RuntimeDir {
            path: path.to_owned(),
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A file in it.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

/// Where the runtime dir is, from the two variables (the rest of the rules are fixed).
fn resolve(yazses: Option<PathBuf>, xdg: Option<PathBuf>) -> PathBuf {
    if let Some(p) = yazses.filter(|p| !p.as_os_str().is_empty()) {
        return p;
    }
    if let Some(p) = xdg.filter(|p| p.is_absolute()) {
        return p.join("yazses");
    }
    crate::platform::default_runtime_dir()
}

// Unix paths, file modes, symlinks and owners: the Unix side's rules.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("yazses-rt-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        p
    }

    #[test]
    fn the_variables_are_taken_in_order() {
        let ours = PathBuf::from("/x/ours");
        assert_eq!(
            resolve(Some(ours.clone()), Some("/run/user/7".into())),
            ours
        );
        assert_eq!(
            resolve(None, Some("/run/user/7".into())),
            PathBuf::from("/run/user/7/yazses")
        );
        // A relative XDG_RUNTIME_DIR is invalid by the spec and ignored.
        let fallback = resolve(None, Some("relative".into()));
        assert!(fallback.is_absolute(), "{}", fallback.display());
        assert!(fallback.ends_with("yazses") || fallback.to_string_lossy().contains("yazses-"));
    }

    #[test]
    fn a_missing_dir_is_created_private() {
        let p = scratch("missing").join("deeper");
        let dir = RuntimeDir::at(&p).unwrap();
        let mode = std::fs::metadata(dir.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn a_world_writable_dir_is_refused_with_the_fix() {
        let p = scratch("open");
        std::fs::create_dir_all(&p).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = RuntimeDir::at(&p).unwrap_err().to_string();
        assert!(
            err.contains("other users can write") && err.contains("chmod 700"),
            "{err}"
        );
    }

    #[test]
    fn a_symlink_is_refused() {
        let p = scratch("link");
        std::os::unix::fs::symlink("/tmp", &p).unwrap();
        let err = RuntimeDir::at(&p).unwrap_err().to_string();
        assert!(err.contains("not a directory"), "{err}");
    }

    #[test]
    fn a_dir_of_another_user_is_refused() {
        // `/` belongs to root; the test runs as root in CI, so use a dir owned by nobody.
        let p = scratch("theirs");
        std::fs::create_dir_all(&p).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
        } else {
            // Without root a dir cannot be given away; `/` is root's, which is not us.
            let err = RuntimeDir::at(Path::new("/")).unwrap_err().to_string();
            assert!(err.contains("belongs to user id 0"), "{err}");
            return;
        }
        let err = RuntimeDir::at(&p).unwrap_err().to_string();
        assert!(err.contains("belongs to user id 65534"), "{err}");
    }
}

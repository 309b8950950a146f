//! [`RuntimeBuilder`]: how a [`ToolRuntime`] is made — from a bundle, from a generated crate's
//! [`HandlerBindings`], or (with the `compiler` feature) from the specs themselves, refusing to
//! start while the linter reports errors (`RuntimeBuilder::from_specs`, which the compiler side
//! defines in `check`, so that the runtime never depends on it) — and where the pluggable parts
//! go in: the approver, hooks, the journal (with recovery's preconditions and reconcile hook),
//! the trace sink and replacement executors.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::ir::{Bundle, BundleError, ExecSpec};
use crate::runtime::approval::Approver;
use crate::runtime::artifacts::{ArtifactBudgets, ArtifactStore};
use crate::runtime::bindings::{BindError, HandlerBindings};
use crate::runtime::exec::builtin::BuiltinExecutor;
use crate::runtime::exec::command::CommandExecutor;
use crate::runtime::exec::handler::HandlerExecutor;
use crate::runtime::exec::{Backend, Dispatch, Executor, UpstreamContext, default_mcp_executor};
use crate::runtime::handler::ToolHandler;
use crate::runtime::hooks::{Hook, HookSet};
use crate::runtime::journal::{Journal, JournalError, MemoryJournal, Precondition, Reconciler};
use crate::runtime::metrics::Metrics;
use crate::runtime::pipeline::{Inner, ToolRuntime};
use crate::runtime::registry::{Registry, ToolLoadError};
use crate::runtime::scheduler::admission::AdmissionTable;
use crate::runtime::scheduler::locks::ResourceLocks;
use crate::runtime::scheduler::{LOCK_FILE, ProjectLocks};
use crate::runtime::trace::{MemoryTrace, TraceSink};
use crate::runtime::workspace::{FileLimits, Workspace, WorkspaceError};

/// A runtime that cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// bundle.json is unusable.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// A tool does not load.
    #[error(transparent)]
    Tool(#[from] ToolLoadError),
    /// A handler binding is wrong or missing.
    #[error(transparent)]
    Bind(#[from] BindError),
    /// The workspace cannot be opened.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// The state folder cannot be placed.
    #[error(transparent)]
    StateDir(#[from] crate::ir::project::StateDirError),
    /// A `protect` glob does not compile.
    #[error(transparent)]
    Protect(#[from] crate::policy::ProtectError),
    /// The state folder lies inside a tree a sandboxed process may write.
    #[error(
        "the state folder `{}` lies inside `{}`, which {user} can write under the sandbox profile `{profile}`: a tool could delete or rewrite the journal and the artifacts. Move `state_dir` out of every writable root (leave it out of toolgate.yaml to use the default, `{{state_home}}/toolgate/{{project}}`), or give {user} a profile that cannot write it",
        state_dir.display(),
        root.display()
    )]
    StateDirWritable {
        /// The state folder.
        state_dir: PathBuf,
        /// The writable tree that holds it, as the process sees it.
        root: PathBuf,
        /// The profile.
        profile: String,
        /// Who can write it: "the tool `x`" or "the MCP server `y`".
        user: String,
    },
    /// The journal cannot be opened (never replaced by a fresh one in silence).
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The project's lock file cannot be opened or locked.
    #[error(
        "cannot use the lock file {} that orders calls across toolgate processes: {source}; give a writable state folder (`state_dir`, `--state-dir`) on a local file system, or a lock folder ({LOCK_DIR_ENV})",
        path.display()
    )]
    Locks {
        /// The lock file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Builds a [`ToolRuntime`].
pub struct RuntimeBuilder {
    bundle: Arc<Bundle>,
    bindings: Option<HandlerBindings>,
    project_root: PathBuf,
    workspace: Option<PathBuf>,
    state_dir: Option<PathBuf>,
    policy_files: Option<crate::policy::PolicyFiles>,
    approver: Option<Arc<dyn Approver>>,
    hooks: HookSet,
    journal: Option<Arc<dyn Journal>>,
    #[cfg(feature = "journal-sqlite")]
    sqlite_journal: bool,
    #[cfg(feature = "journal-postgres")]
    postgres_journal: Option<(String, crate::runtime::journal::postgres::PostgresOptions)>,
    preconditions: std::collections::HashMap<String, Arc<dyn Precondition>>,
    reconciler: Option<Arc<dyn Reconciler>>,
    trace: Option<Arc<dyn TraceSink>>,
    executors: Vec<(Backend, Arc<dyn Executor>)>,
    shim: Option<PathBuf>,
    process_locks: bool,
    lock_dir: Option<PathBuf>,
    #[cfg(feature = "journal-postgres")]
    postgres_locks: Option<crate::runtime::scheduler::PgLocks>,
    /// The first error of a chained call (`bind`), returned by `build`.
    deferred: Option<BuildError>,
}

/// The environment variable that places the project's lock file elsewhere than the state
/// folder (see [`RuntimeBuilder::lock_dir`]).
pub const LOCK_DIR_ENV: &str = "TOOLGATE_LOCK_DIR";

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("tools", &self.bundle.tools.len())
            .field("project_root", &self.project_root)
            .finish_non_exhaustive()
    }
}

impl RuntimeBuilder {
    /// A runtime for a bundle of the project in `project_root` (the folder toolgate.yaml's
    /// `workspace` and `state_dir` are relative to).
    pub fn from_bundle(bundle: impl Into<Arc<Bundle>>, project_root: impl AsRef<Path>) -> Self {
        RuntimeBuilder {
            bundle: bundle.into(),
            bindings: None,
            project_root: project_root.as_ref().to_path_buf(),
            workspace: None,
            state_dir: None,
            policy_files: None,
            approver: None,
            hooks: HookSet::default(),
            journal: None,
            #[cfg(feature = "journal-sqlite")]
            sqlite_journal: false,
            #[cfg(feature = "journal-postgres")]
            postgres_journal: None,
            preconditions: std::collections::HashMap::new(),
            reconciler: None,
            trace: None,
            executors: Vec::new(),
            shim: None,
            process_locks: true,
            lock_dir: None,
            #[cfg(feature = "journal-postgres")]
            postgres_locks: None,
            deferred: None,
        }
    }

    /// A runtime for a bundle.json text (format and content hash are checked) of the project
    /// in `project_root`.
    pub fn from_bundle_json(
        text: &str,
        project_root: impl AsRef<Path>,
    ) -> Result<Self, BuildError> {
        Ok(RuntimeBuilder::from_bundle(
            Bundle::from_json(text)?,
            project_root,
        ))
    }

    /// A runtime for a generated crate's bindings of the project in `project_root`; every
    /// `handler: rust` tool must be bound.
    pub fn from_bindings(bindings: HandlerBindings, project_root: impl AsRef<Path>) -> Self {
        let mut b = RuntimeBuilder::from_bundle(bindings.bundle().clone(), project_root);
        b.bindings = Some(bindings);
        b
    }

    /// Overrides the workspace folder.
    pub fn workspace(mut self, dir: impl AsRef<Path>) -> Self {
        self.workspace = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Overrides the state folder (journal and artifacts).
    pub fn state_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.state_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The files the project's policy was read from (default: `toolgate.yaml` and the default
    /// spec globs in the project folder), which no tool may write.
    pub fn policy_files(mut self, files: crate::policy::PolicyFiles) -> Self {
        self.policy_files = Some(files);
        self
    }

    /// Binds a handler to a `handler: rust` tool. A wrong binding (no such tool, not a
    /// handler tool, bound twice) is returned by [`RuntimeBuilder::build`].
    pub fn bind(mut self, tool: &str, handler: impl ToolHandler) -> Self {
        let bindings = self
            .bindings
            .get_or_insert_with(|| HandlerBindings::new(self.bundle.clone()));
        if let Err(e) = bindings.bind(tool, Arc::new(handler))
            && self.deferred.is_none()
        {
            self.deferred = Some(e.into());
        }
        self
    }

    /// Who answers `ask` decisions (a closure too: [`crate::runtime::extend::approver_fn`]).
    pub fn approver(mut self, approver: impl Approver + 'static) -> Self {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// Adds a hook (hooks run in the order added).
    pub fn hook(mut self, hook: impl Hook + 'static) -> Self {
        self.hooks.push(Arc::new(hook));
        self
    }

    /// The journal (default: in memory). Pass an `Arc` of it to keep a handle.
    pub fn journal(mut self, journal: impl Journal + 'static) -> Self {
        self.journal = Some(Arc::new(journal));
        self
    }

    /// Journals to SQLite in the state folder (`<state_dir>/journal.db`), opened by `build`:
    /// durable, and recovered before the first call. What the command line uses.
    #[cfg(feature = "journal-sqlite")]
    pub fn sqlite_journal(mut self) -> Self {
        self.sqlite_journal = true;
        self
    }

    /// Journals to the PostgreSQL database at `url` (`postgres://…`), shared with every host
    /// pointed at it, opened by `build` with the default lease; takes precedence over
    /// [`RuntimeBuilder::sqlite_journal`]. Artifacts stay in the local state folder.
    #[cfg(feature = "journal-postgres")]
    pub fn postgres_journal(self, url: impl Into<String>) -> Self {
        self.postgres_journal_with(
            url,
            crate::runtime::journal::postgres::PostgresOptions::default(),
        )
    }

    /// [`RuntimeBuilder::postgres_journal`] with options (the lease, the pool).
    #[cfg(feature = "journal-postgres")]
    pub fn postgres_journal_with(
        mut self,
        url: impl Into<String>,
        opts: crate::runtime::journal::postgres::PostgresOptions,
    ) -> Self {
        self.postgres_journal = Some((url.into(), opts));
        self
    }

    /// The condition under which an unfinished call of a conditionally idempotent tool may run
    /// again after a crash (builtins bring their own: `apply_patch` checks `expected_hash`).
    pub fn precondition(mut self, tool: impl Into<String>, p: impl Precondition + 'static) -> Self {
        self.preconditions.insert(tool.into(), Arc::new(p));
        self
    }

    /// Asked during recovery about operations whose outcome is otherwise unknown.
    pub fn reconciler(mut self, r: impl Reconciler + 'static) -> Self {
        self.reconciler = Some(Arc::new(r));
        self
    }

    /// Where trace records go (default: the most recent 4096 in memory).
    pub fn trace_sink(mut self, sink: impl TraceSink + 'static) -> Self {
        self.trace = Some(Arc::new(sink));
        self
    }

    /// Replaces the executor of one backend (e.g. the command backend by a sandbox shim).
    pub fn executor(mut self, backend: Backend, executor: impl Executor) -> Self {
        self.executors.push((backend, Arc::new(executor)));
        self
    }

    /// The program command tools run under as the exec shim: `toolgate-shim` or `toolgate`
    /// (default: `TOOLGATE_SHIM`, else `toolgate-shim` beside this executable, else this
    /// executable). Needed when neither is beside the running program and it does not dispatch
    /// `toolgate::runtime::sandbox::run_shim` itself.
    pub fn shim(mut self, program: impl AsRef<Path>) -> Self {
        self.shim = Some(program.as_ref().to_path_buf());
        self
    }

    /// Whether calls also take the project's cross-process locks (default: yes), so that other
    /// toolgate processes on the project (other `serve`s, a `call`) are excluded as calls of
    /// this runtime are. Turn it off only for a runtime that is alone on its workspace.
    pub fn process_locks(mut self, on: bool) -> Self {
        self.process_locks = on;
        self
    }

    /// The folder of the project's lock file (default: the environment variable
    /// [`LOCK_DIR_ENV`], else the state folder). Processes share locks when they use one
    /// folder: give it to processes that keep separate state folders but touch one workspace.
    pub fn lock_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.lock_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Takes the cross-process locks in PostgreSQL instead of the lock file (see
    /// [`PgLocks`](crate::runtime::PgLocks)): hosts that share the database and namespace exclude
    /// each other as the processes of one host do through the lock file.
    #[cfg(feature = "journal-postgres")]
    pub fn postgres_locks(mut self, locks: crate::runtime::PgLocks) -> Self {
        self.postgres_locks = Some(locks);
        self
    }

    /// Opens the workspace, compiles every tool, and returns the runtime; or the first error
    /// of a chained call (a wrong [`RuntimeBuilder::bind`]).
    pub fn build(mut self) -> Result<ToolRuntime, BuildError> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        let project = self.bundle.project.clone();
        let workspace_dir = self
            .workspace
            .clone()
            .unwrap_or_else(|| self.project_root.join(&project.workspace));
        let workspace = Workspace::open(&workspace_dir)?;
        let state_dir = match self.state_dir.clone() {
            Some(dir) => dir,
            None => crate::ir::project::resolve_state_dir(&project.state_dir, &self.project_root)?,
        };
        let protected = protected_set(&project.protect, workspace.root(), &state_dir)?;
        refuse_writable_state_dir(&self.bundle, workspace.root(), &state_dir, &protected)?;
        let policy = self
            .policy_files
            .take()
            .unwrap_or_else(|| crate::policy::PolicyFiles::at_root(&self.project_root))
            .with_state_dir(&state_dir);
        if let Some(trust) = policy.trust_dir() {
            // Made now, so that command tools find it masked rather than free to create.
            let _ = std::fs::create_dir_all(trust);
        }
        let workspace = Arc::new(
            workspace
                .with_protected(protected)
                .with_policy_files(Arc::new(policy))
                .with_file_limits(FileLimits::of(&project.budgets)),
        );
        let workspace_str = workspace.root().to_string_lossy().into_owned();
        let registry = Registry::build(&self.bundle)?;
        if let Some(b) = &self.bindings {
            b.check_complete()?;
        }
        let has_handlers = self
            .bundle
            .tools
            .iter()
            .any(|t| matches!(t.exec, ExecSpec::Handler { .. }));
        let mut dispatch = Dispatch {
            builtin: Arc::new(BuiltinExecutor),
            command: Arc::new(match &self.shim {
                Some(shim) => {
                    CommandExecutor::new(project.sandbox_profiles.clone()).with_shim(shim)
                }
                None => CommandExecutor::new(project.sandbox_profiles.clone()),
            }),
            mcp: default_mcp_executor(
                &project,
                &self.project_root,
                UpstreamContext {
                    workspace: workspace.root().to_path_buf(),
                    state_dir: state_dir.clone(),
                    protected: workspace.protected().clone(),
                    policy: workspace.policy_files().cloned(),
                    shim: self
                        .shim
                        .clone()
                        .unwrap_or_else(crate::runtime::exec::spawn::default_shim),
                },
            ),
            handler: Arc::new(HandlerExecutor::new(self.bindings.filter(|_| has_handlers))),
            http: crate::runtime::exec::default_http_executor(&project, &self.project_root),
        };
        for (backend, executor) in self.executors {
            dispatch.set(backend, executor);
        }
        let (trace, memory_trace): (Arc<dyn TraceSink>, _) = match self.trace {
            Some(t) => (t, None),
            None => {
                let m = Arc::new(MemoryTrace::default());
                (m.clone(), Some(m))
            }
        };
        #[cfg(feature = "journal-postgres")]
        if self.journal.is_none()
            && let Some((url, opts)) = self.postgres_journal.take()
        {
            // Hosts that share a journal share a workspace's resources too: unless told
            // otherwise, they take their resource locks in the same database (one database
            // is one project's journal, so one namespace serves).
            if self.process_locks && self.postgres_locks.is_none() {
                let pool = crate::runtime::journal::postgres::lock_pool(&url, &opts)?;
                self.postgres_locks = Some(crate::runtime::PgLocks::new(pool, "project"));
            }
            self.journal = Some(Arc::new(
                crate::runtime::journal::postgres::PostgresJournal::open_with(&url, opts)?,
            ));
        }
        #[cfg(feature = "journal-sqlite")]
        let journal = match (self.journal, self.sqlite_journal) {
            (Some(j), _) => j,
            (None, true) => Arc::new(crate::runtime::journal::sqlite::SqliteJournal::open(
                state_dir.join(crate::runtime::journal::sqlite::JOURNAL_FILE),
            )?),
            (None, false) => Arc::new(MemoryJournal::default()),
        };
        #[cfg(not(feature = "journal-sqlite"))]
        let journal = self
            .journal
            .unwrap_or_else(|| Arc::new(MemoryJournal::default()));
        let artifacts =
            ArtifactStore::new(&state_dir).with_budgets(ArtifactBudgets::of(&project.budgets));
        #[cfg(feature = "journal-postgres")]
        let postgres_locks = self.postgres_locks.take();
        #[cfg(not(feature = "journal-postgres"))]
        let postgres_locks: Option<std::convert::Infallible> = None;
        let locks = if !self.process_locks {
            None
        } else if let Some(l) = postgres_locks {
            #[cfg(feature = "journal-postgres")]
            {
                Some(ResourceLocks::Postgres(l))
            }
            #[cfg(not(feature = "journal-postgres"))]
            match l {}
        } else {
            let dir = self
                .lock_dir
                .or_else(|| {
                    std::env::var_os(LOCK_DIR_ENV)
                        .filter(|d| !d.is_empty())
                        .map(PathBuf::from)
                })
                .unwrap_or_else(|| state_dir.clone());
            let path = dir.join(LOCK_FILE);
            match ProjectLocks::open(&path) {
                Ok(l) => Some(ResourceLocks::File(l)),
                Err(source) => return Err(BuildError::Locks { path, source }),
            }
        };
        let protection = crate::runtime::permission::WorkspaceProtection::shared(&workspace);
        Ok(ToolRuntime {
            inner: Arc::new(Inner {
                registry,
                project,
                workspace,
                workspace_str,
                artifacts,
                approver: self.approver,
                hooks: self.hooks,
                journal,
                preconditions: self.preconditions,
                reconciler: self.reconciler,
                recovery: tokio::sync::OnceCell::new(),
                trace,
                memory_trace,
                metrics: Metrics::default(),
                dispatch,
                admission: Arc::new(AdmissionTable::new(locks)),
                cel: crate::cel::Functions::new(Some(protection.clone())),
                protection,
            }),
        })
    }
}

/// The project's protected set, with the state folder added when it lies inside the workspace
/// (its journal and raw artifacts hold every session's arguments and outputs).
pub(crate) fn protected_set(
    policy: &crate::ir::ProtectPolicy,
    root: &Path,
    state_dir: &Path,
) -> Result<crate::policy::ProtectedSet, crate::policy::ProtectError> {
    let set = crate::policy::ProtectedSet::new(policy)?;
    let state = std::fs::canonicalize(state_dir).unwrap_or_else(|_| state_dir.to_path_buf());
    match state.strip_prefix(root).ok().and_then(Path::to_str) {
        Some(rel) if !rel.is_empty() => set.with_literal(
            rel,
            "The state folder (the journal and raw artifacts of every session) is never readable or writable by tools.",
        ),
        _ => Ok(set),
    }
}

/// Refuses a state folder inside a tree that a process under a sandbox profile can write, as
/// that process will see it on this kernel: a writable bind of its view (the workspace under
/// `workspace-write`), or — without a view — a Landlock writable root (then the host's `/tmp`
/// too). A private `/tmp` is not the host's; a profile that writes `/` (`none`, and a tool or
/// MCP server without a profile) isolates no files and is not a sandbox for this rule (its view
/// still masks the state folder). A profile the kernel cannot put in force is skipped: its
/// calls fail closed.
fn refuse_writable_state_dir(
    bundle: &Bundle,
    workspace: &Path,
    state_dir: &Path,
    protected: &crate::policy::ProtectedSet,
) -> Result<(), BuildError> {
    use crate::runtime::exec::sandbox::{self, PlanContext};
    let project = &bundle.project;
    let state = real_path(state_dir);
    let users = bundle
        .tools
        .iter()
        .filter(|t| matches!(t.exec, ExecSpec::Command(_)))
        .filter_map(|t| Some((t.sandbox.as_deref()?, format!("the tool `{}`", t.name))))
        .chain(project.mcp_servers.iter().filter_map(|(name, s)| {
            Some((s.sandbox.as_deref()?, format!("the MCP server `{name}`")))
        }));
    let ctx = PlanContext {
        workspace,
        state_dir: Some(state_dir),
        toolchains: &[],
        protected: Some(protected),
        policy: None,
    };
    let mut checked: Vec<&str> = Vec::new();
    for (profile_name, user) in users {
        if checked.contains(&profile_name) {
            continue;
        }
        checked.push(profile_name);
        let Some(profile) = project.sandbox_profiles.get(profile_name) else {
            continue;
        };
        if profile.writes_everything() {
            continue;
        }
        let Ok(plan) = sandbox::plan(Some((profile_name, profile)), &ctx, sandbox::probe()) else {
            continue;
        };
        if let Some(root) = plan
            .writable_trees()
            .into_iter()
            .find(|t| state.starts_with(real_path(t)))
        {
            return Err(BuildError::StateDirWritable {
                state_dir: state_dir.to_path_buf(),
                root,
                profile: profile_name.to_owned(),
                user,
            });
        }
    }
    Ok(())
}

/// A path with its links resolved as far as it exists (the state folder may not exist yet).
fn real_path(p: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut cur = p.to_path_buf();
    loop {
        if let Ok(real) = cur.canonicalize() {
            return missing
                .iter()
                .rev()
                .fold(real, |acc: PathBuf, c| acc.join(c));
        }
        match (
            cur.file_name().map(std::ffi::OsStr::to_os_string),
            cur.parent(),
        ) {
            (Some(name), Some(parent)) => {
                missing.push(name);
                cur = parent.to_path_buf();
            }
            _ => return p.to_path_buf(),
        }
    }
}

//! Java class-file analysis: the ClassDB of Section 4.3 (Fig. 4) and the listener map
//! that ties each GUI event to the method that handles it.
//!
//! [`ClassDb::load`] reads the application's classes (`.class` files, directories, jars)
//! with `cafebabe`, and [`ClassDb::read_write`] answers `getFieldsRead` and
//! `getFieldsWritten` of Algorithm 1 for an event handler.
//!
//! # How fields and calls are counted
//!
//! * **Fields are named by class, not object.** `GETFIELD`/`GETSTATIC` read and
//!   `PUTFIELD`/`PUTSTATIC` write the field `Class.field`, where `Class` is the owner in the
//!   instruction's field reference (so `mainWindow.text = null` in `Dialog` writes
//!   `MainWindow.text`). Instance and static fields are treated alike, as in Section 4.3.2.
//!   Only fields of classes in the database count: reading `System.err` is library state
//!   that no event of the application writes.
//! * **Calls are followed recursively, inside the application.** `INVOKEVIRTUAL`,
//!   `INVOKESPECIAL`, `INVOKESTATIC` and `INVOKEINTERFACE` of a method of a class in the
//!   database add that method's reads and writes. When the named class does not declare
//!   the method, the search goes up the superclass chain while the superclass is in the
//!   database; calls into library classes are dropped. There is no dispatch on the
//!   receiver's runtime type (the paper's analysis "is not reliable regarding
//!   polymorphism" either). Recursion is fine: a query collects the set of reachable
//!   methods once, then unions their fields; results are memoised per method.
//! * **Constructors of other objects are not followed.** `new Dialog(this)` runs
//!   `Dialog.<init>`, which stores the main window in the new dialog's field. That write
//!   initialises a fresh object; no later event can read it through an object that
//!   existed before. Following it would make e3 of Listing 1 write `Dialog.mainWindow`,
//!   which e4 reads, an edge e3 → e4 that Figure 2 does not have. A constructor's own
//!   `super(..)`/`this(..)` chain, which initialises the same object, is followed.
//!   Static initialisers are never followed.
//! * **Creating a lambda does not run it.** `invokedynamic` through `LambdaMetafactory`
//!   produces a listener object; its body runs only when an event fires, so its synthetic
//!   method is not a callee of the method that creates it. It becomes a handler when
//!   it is registered as a listener (below).
//!
//! # Listeners
//!
//! A symbolic run of each method's operand stack follows component objects from
//! `new JButton("e1")` through locals and `this` fields to `component.addXListener(l)`
//! (any `add…Listener` method with one interface parameter), and records who registers
//! what ([`JavaListener`]). The handler is
//! * the lambda's synthetic method, or the target of a method reference;
//! * for an object of a listener class (anonymous, inner, named, or `this`), the methods
//!   of the listener interface the class defines (its `actionPerformed` for an
//!   `ActionListener`); a class may give several handlers for one registration (a
//!   `MouseAdapter` subclass with `mouseClicked` and `mousePressed`).
//!
//! The label is the string constant the component was constructed with, when it was.

mod javac;
mod scan;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use crate::ReadWrite;

pub use javac::compile_java;
use scan::{ClassFacts, ListenerValue, MethodFacts};

/// A method of a class: dotted binary class name (`pkg.Outer$Inner`), method name and
/// JVM descriptor (`(Ljava/awt/event/ActionEvent;)V`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct MethodRef {
    pub class: String,
    pub name: String,
    pub descriptor: String,
}

impl fmt::Display for MethodRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}{}", self.class, self.name, self.descriptor)
    }
}

/// A listener registration found in the bytecode: which component, which event handler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JavaListener {
    /// The class whose code registers the listener, e.g. `MainWindow`.
    pub owner: String,
    /// The component's class, e.g. `javax.swing.JButton`; when the component object could
    /// not be tracked, the class named by the registering call.
    pub component: String,
    /// The string constant the component was constructed with (`new JButton("e1")`).
    pub label: Option<String>,
    /// The registering method, e.g. `addActionListener`.
    pub register: String,
    /// The method that runs when the event fires.
    pub handler: MethodRef,
}

/// A file (or jar entry) that could not be analysed, or a failed compilation.
#[derive(Debug, Clone, thiserror::Error, Serialize)]
pub enum ClassError {
    #[error("cannot read {}: {message}", .path.display())]
    Io { path: PathBuf, message: String },
    #[error("{}: not a valid class file: {message}", location(.path, .entry))]
    Parse {
        path: PathBuf,
        /// The entry inside a jar, when the class came from one.
        entry: Option<String>,
        message: String,
    },
    #[error("cannot read jar {}: {message}", location(.path, .entry))]
    Jar {
        path: PathBuf,
        entry: Option<String>,
        message: String,
    },
    #[error("no .java files under {}", .sources.display())]
    NoSources { sources: PathBuf },
    #[error(
        "cannot run {} to compile {}: install a JDK: apt-get install default-jdk-headless",
        .javac.display(),
        .sources.display()
    )]
    JavacMissing { javac: PathBuf, sources: PathBuf },
    #[error("javac failed ({status}) on {}:\n{stderr}", .sources.display())]
    Javac {
        sources: PathBuf,
        status: String,
        stderr: String,
    },
}

fn location(path: &Path, entry: &Option<String>) -> String {
    match entry {
        Some(entry) => format!("{}!{entry}", path.display()),
        None => path.display().to_string(),
    }
}

/// How much a jar may make [`ClassDb::load`] decompress. A jar is a zip archive, and a zip
/// can declare (or, with a lying header, stream) gigabytes from a few kilobytes: without a
/// bound one crafted member would take all memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JarLimits {
    /// The largest class file read from a jar, uncompressed. The JVM's own limits keep
    /// real class files far below the default (64 MiB).
    pub member_bytes: u64,
    /// The most class file bytes read from one jar, uncompressed; the rest of the jar is
    /// refused (default 1 GiB, several times the largest application jars).
    pub jar_bytes: u64,
}

impl Default for JarLimits {
    fn default() -> Self {
        Self {
            member_bytes: 64 << 20,
            jar_bytes: 1 << 30,
        }
    }
}

/// The ClassDB of Fig. 4: the application's classes, their methods, the fields each
/// method reads and writes, and the calls it makes; plus the listener registrations.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ClassDb {
    classes: BTreeMap<String, ClassEntry>,
    #[serde(skip)]
    memo: Memo,
}

#[derive(Debug, Clone, Serialize)]
struct ClassEntry {
    /// Where the class came from: a file, or `jar!entry`.
    source: String,
    facts: ClassFacts,
}

/// Memoised [`ClassDb::read_write`] answers. Behind a mutex so queries take `&self` and
/// the database stays `Sync`.
#[derive(Default)]
struct Memo(Mutex<HashMap<MethodRef, ReadWrite>>);

impl Memo {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<MethodRef, ReadWrite>> {
        // A panic while holding the lock cannot leave a half-written entry: inserts are
        // single calls. Keep using the map.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Clone for Memo {
    fn clone(&self) -> Self {
        Memo(Mutex::new(self.map().clone()))
    }
}

impl fmt::Debug for Memo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Memo({} entries)", self.map().len())
    }
}

impl ClassDb {
    /// Loads every class under `paths`: a `.class` file, a directory (its `.class` files,
    /// recursively), or a `.jar`/`.zip` (its `.class` entries). A file that cannot be read
    /// or parsed becomes a [`ClassError`] naming it, and loading goes on with the rest.
    /// Jar members are read within [`JarLimits::default`].
    pub fn load(paths: &[PathBuf]) -> (ClassDb, Vec<ClassError>) {
        Self::load_with(paths, &JarLimits::default())
    }

    /// [`load`](Self::load) with the given bounds on what jars may decompress. A member
    /// over [`JarLimits::member_bytes`] is an error naming the jar and the member; once a
    /// jar's members pass [`JarLimits::jar_bytes`], the rest of that jar is refused.
    pub fn load_with(paths: &[PathBuf], limits: &JarLimits) -> (ClassDb, Vec<ClassError>) {
        let mut db = ClassDb::default();
        let mut errors = Vec::new();
        for path in paths {
            db.load_path(path, limits, &mut errors);
        }
        (db, errors)
    }

    /// A database of one class, from its bytes; `name` says where they came from.
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<ClassDb, ClassError> {
        let mut db = ClassDb::default();
        db.add_class(name, bytes)?;
        Ok(db)
    }

    /// Parses one class file and adds it; returns the class's dotted name. A class already
    /// present keeps its first definition (the earlier path wins, as on a class path).
    pub fn add_class(&mut self, source: &str, bytes: &[u8]) -> Result<String, ClassError> {
        self.add(source, None, bytes)
    }

    fn add(
        &mut self,
        source: &str,
        entry: Option<&str>,
        bytes: &[u8],
    ) -> Result<String, ClassError> {
        let class = parse_class_checked(bytes).map_err(|message| ClassError::Parse {
            path: PathBuf::from(source),
            entry: entry.map(str::to_string),
            message,
        })?;
        let facts = scan::scan_class(&class);
        let name = facts.name.clone();
        let source = location(Path::new(source), &entry.map(str::to_string));
        match self.classes.get(&name) {
            Some(existing) => tracing::warn!(
                class = %name,
                kept = %existing.source,
                ignored = %source,
                "class defined twice"
            ),
            None => {
                self.classes
                    .insert(name.clone(), ClassEntry { source, facts });
                self.memo.map().clear();
            }
        }
        Ok(name)
    }

    fn load_path(&mut self, path: &Path, limits: &JarLimits, errors: &mut Vec<ClassError>) {
        let io_error = |e: std::io::Error| ClassError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        if path.is_dir() {
            match sorted_entries(path) {
                Ok(entries) => {
                    for child in entries {
                        if child.is_dir() || child.extension().is_some_and(|e| e == "class") {
                            self.load_path(&child, limits, errors);
                        }
                    }
                }
                Err(e) => errors.push(io_error(e)),
            }
            return;
        }
        let is_archive = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("jar") || e.eq_ignore_ascii_case("zip"));
        if is_archive {
            self.load_jar(path, limits, errors);
            return;
        }
        match std::fs::read(path) {
            Ok(bytes) => {
                if let Err(e) = self.add(&path.to_string_lossy(), None, &bytes) {
                    errors.push(e);
                }
            }
            Err(e) => errors.push(io_error(e)),
        }
    }

    fn load_jar(&mut self, path: &Path, limits: &JarLimits, errors: &mut Vec<ClassError>) {
        let jar_error = |entry: Option<String>, message: String| ClassError::Jar {
            path: path.to_path_buf(),
            entry,
            message,
        };
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) => {
                errors.push(ClassError::Io {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                });
                return;
            }
        };
        let mut archive = match zip::ZipArchive::new(std::io::BufReader::new(file)) {
            Ok(a) => a,
            Err(e) => {
                errors.push(jar_error(None, e.to_string()));
                return;
            }
        };
        let source = path.to_string_lossy().into_owned();
        let mut jar_bytes = 0u64;
        for index in 0..archive.len() {
            let mut member = match archive.by_index(index) {
                Ok(m) => m,
                Err(e) => {
                    errors.push(jar_error(Some(format!("#{index}")), e.to_string()));
                    continue;
                }
            };
            let name = match member.name() {
                Ok(n) => n.into_owned(),
                Err(e) => {
                    errors.push(jar_error(Some(format!("#{index}")), e.to_string()));
                    continue;
                }
            };
            // module-info and multi-release duplicates are not application classes.
            if !member.is_file()
                || !name.ends_with(".class")
                || name.ends_with("module-info.class")
                || name.starts_with("META-INF/")
            {
                continue;
            }
            let too_big = |size: u64| {
                format!(
                    "the class file inflates to {size} bytes or more, over the limit of {} \
                     bytes per class file (a zip bomb?)",
                    limits.member_bytes
                )
            };
            // The declared size refuses an honest bomb before any decompression; the
            // `take` bounds a member whose header understates what its data inflates to.
            if member.size() > limits.member_bytes {
                errors.push(jar_error(Some(name), too_big(member.size())));
                continue;
            }
            let mut bytes = Vec::new();
            let read = (&mut member)
                .take(limits.member_bytes.saturating_add(1))
                .read_to_end(&mut bytes);
            if let Err(e) = read {
                errors.push(jar_error(Some(name), e.to_string()));
                continue;
            }
            if bytes.len() as u64 > limits.member_bytes {
                errors.push(jar_error(Some(name), too_big(bytes.len() as u64)));
                continue;
            }
            jar_bytes += bytes.len() as u64;
            if jar_bytes > limits.jar_bytes {
                errors.push(jar_error(
                    Some(name),
                    format!(
                        "with this member the jar's class files inflate past the limit per \
                         jar of {} bytes (a zip bomb?); it and the later members are not read",
                        limits.jar_bytes
                    ),
                ));
                return;
            }
            if let Err(e) = self.add(&source, Some(&name), &bytes) {
                errors.push(e);
            }
        }
    }

    /// Dotted names of the loaded classes, sorted.
    pub fn classes(&self) -> impl Iterator<Item = &str> + '_ {
        self.classes.keys().map(String::as_str)
    }

    /// Where a class was loaded from (`dir/Foo.class`, `app.jar!pkg/Foo.class`).
    pub fn source_of(&self, class: &str) -> Option<&str> {
        self.classes.get(class).map(|c| c.source.as_str())
    }

    /// The method `class.name`, declared there or inherited from a superclass in the
    /// database; the first declared overload when there are several.
    pub fn find_method(&self, class: &str, name: &str) -> Option<MethodRef> {
        self.resolve_by(class, |m| m.name == name)
    }

    /// The method a call instruction naming `method` runs, among the database's classes:
    /// `method`'s class or its nearest superclass in the database that declares it.
    pub fn resolve(&self, method: &MethodRef) -> Option<MethodRef> {
        self.resolve_by(&method.class, |m| {
            m.name == method.name && m.descriptor == method.descriptor
        })
    }

    fn resolve_by(&self, class: &str, wanted: impl Fn(&MethodFacts) -> bool) -> Option<MethodRef> {
        let mut class = self.classes.get(class)?;
        // Bounded by the number of classes, in case of a malformed cyclic hierarchy.
        for _ in 0..=self.classes.len() {
            if let Some(m) = class.facts.methods.iter().find(|m| wanted(m)) {
                return Some(MethodRef {
                    class: class.facts.name.clone(),
                    name: m.name.clone(),
                    descriptor: m.descriptor.clone(),
                });
            }
            class = self.classes.get(class.facts.super_class.as_deref()?)?;
        }
        None
    }

    fn facts(&self, method: &MethodRef) -> Option<&MethodFacts> {
        self.classes
            .get(&method.class)?
            .facts
            .method(&method.name, &method.descriptor)
    }

    /// The methods the database resolves `method`'s calls to, directly.
    pub fn callees(&self, method: &MethodRef) -> BTreeSet<MethodRef> {
        let Some(facts) = self.resolve(method).and_then(|m| self.facts(&m)) else {
            return BTreeSet::new();
        };
        facts.calls.iter().filter_map(|c| self.resolve(c)).collect()
    }

    /// Every method of the database that running `method` may run, `method` included
    /// (when the database has it): the closure of [`callees`](Self::callees).
    pub fn reachable(&self, method: &MethodRef) -> BTreeSet<MethodRef> {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<MethodRef> = self.resolve(method).into_iter().collect();
        while let Some(m) = todo.pop() {
            if !seen.insert(m.clone()) {
                continue;
            }
            let Some(facts) = self.facts(&m) else {
                continue;
            };
            todo.extend(
                facts
                    .calls
                    .iter()
                    .filter_map(|c| self.resolve(c))
                    .filter(|c| !seen.contains(c)),
            );
        }
        seen
    }

    /// The fields `method` reads and writes, itself and through every method of the
    /// database it may call (Section 3.1: "we recursively follow potential method
    /// calls"). Empty for a method outside the database.
    pub fn read_write(&self, method: &MethodRef) -> ReadWrite {
        if let Some(hit) = self.memo.map().get(method) {
            return hit.clone();
        }
        let mut rw = ReadWrite::default();
        for m in self.reachable(method) {
            let Some(facts) = self.facts(&m) else {
                continue;
            };
            let in_app = |f: &&scan::FieldRef| self.classes.contains_key(&f.class);
            let name = |f: &scan::FieldRef| format!("{}.{}", f.class, f.name);
            rw.reads.extend(facts.reads.iter().filter(in_app).map(name));
            rw.writes
                .extend(facts.writes.iter().filter(in_app).map(name));
        }
        self.memo.map().insert(method.clone(), rw.clone());
        rw
    }

    /// Every listener registration in the database, by registering class (sorted) and then
    /// in code order. Registrations whose handler cannot be found in the database (a
    /// listener object of a library class) are left out.
    pub fn listeners(&self) -> Vec<JavaListener> {
        let mut out = Vec::new();
        for class in self.classes.values() {
            for reg in &class.facts.registrations {
                let handlers = match &reg.listener {
                    ListenerValue::Method(target) => {
                        vec![self.resolve(target).unwrap_or_else(|| target.clone())]
                    }
                    ListenerValue::Object(listener_class) => {
                        self.interface_methods(listener_class, &reg.listener_type)
                    }
                };
                if handlers.is_empty() {
                    tracing::debug!(
                        owner = %class.facts.name,
                        register = %reg.register,
                        listener = ?reg.listener,
                        "no handler method in the database"
                    );
                }
                out.extend(handlers.into_iter().map(|handler| JavaListener {
                    owner: class.facts.name.clone(),
                    component: reg.component.clone(),
                    label: reg.label.clone(),
                    register: reg.register.clone(),
                    handler,
                }));
            }
        }
        out
    }

    /// The methods of `listener_type` that `class` (or a superclass in the database)
    /// implements. For an interface this module does not know, any instance method
    /// taking a single `…Event` argument counts.
    fn interface_methods(&self, class: &str, listener_type: &str) -> Vec<MethodRef> {
        let simple = listener_type.rsplit('.').next().unwrap_or(listener_type);
        let known = listener_methods(simple);
        let mut found: Vec<MethodRef> = Vec::new();
        let mut current = self.classes.get(class);
        let mut hops = 0;
        while let Some(c) = current {
            for m in &c.facts.methods {
                let wanted = match known {
                    Some(names) => names.contains(&m.name.as_str()) && one_argument(&m.descriptor),
                    None => takes_one_event(&m.descriptor),
                };
                let overridden = found
                    .iter()
                    .any(|f| f.name == m.name && f.descriptor == m.descriptor);
                if wanted && !m.is_static && !overridden {
                    found.push(MethodRef {
                        class: c.facts.name.clone(),
                        name: m.name.clone(),
                        descriptor: m.descriptor.clone(),
                    });
                }
            }
            hops += 1;
            if hops > self.classes.len() {
                break;
            }
            current = c
                .facts
                .super_class
                .as_deref()
                .and_then(|s| self.classes.get(s));
        }
        found
    }
}

/// Parses a class file with its bytecode, after checking what cafebabe's bytecode reader
/// trusts: the entry count of each `tableswitch` and `lookupswitch`. A corrupt count makes
/// it overflow `high - low + 1` (a panic where overflow checks are on) or reserve gigabytes
/// before it notices the code is too short. So the class is read once without bytecode,
/// every switch of every method is checked against the bytes its code has left, and only
/// then read in full.
fn parse_class_checked(bytes: &[u8]) -> Result<cafebabe::ClassFile<'_>, String> {
    let mut shallow = cafebabe::ParseOptions::default();
    shallow.parse_bytecode(false);
    let class = cafebabe::parse_class_with_options(bytes, &shallow).map_err(|e| e.to_string())?;
    for method in &class.methods {
        for attribute in &method.attributes {
            if let cafebabe::attributes::AttributeData::Code(code) = &attribute.data {
                check_switches(code.code)
                    .map_err(|e| format!("method {}{}: {e}", method.name, method.descriptor))?;
            }
        }
    }
    drop(class);
    cafebabe::parse_class(bytes).map_err(|e| e.to_string())
}

/// Walks a method's code by instruction lengths (JVM spec, chapter 6) and fails on a switch
/// whose table would run past the end of the code. Stops quietly at an unknown opcode or a
/// truncated instruction: cafebabe reports those itself.
fn check_switches(code: &[u8]) -> Result<(), String> {
    let mut pc = 0usize;
    while let Some(&op) = code.get(pc) {
        let length = match op {
            0x10 | 0x12 | 0x15..=0x19 | 0x36..=0x3a | 0xa9 | 0xbc => 2,
            0x11
            | 0x13
            | 0x14
            | 0x84
            | 0x99..=0xa8
            | 0xb2..=0xb8
            | 0xbb
            | 0xbd
            | 0xc0
            | 0xc1
            | 0xc6
            | 0xc7 => 3,
            0xc5 => 4,
            0xb9 | 0xba | 0xc8 | 0xc9 => 5,
            0xc4 => match code.get(pc + 1) {
                Some(0x84) => 6,
                _ => 4,
            },
            0xaa | 0xab => {
                // The operands start at the next multiple of 4 from the code's start.
                let operands = (pc + 4) & !3;
                let word = |i: usize| -> Option<i64> {
                    let at = operands + 4 * i;
                    let b = code.get(at..at + 4)?;
                    Some(i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])))
                };
                let (header, entries, entry_bytes) = if op == 0xaa {
                    let (Some(low), Some(high)) = (word(1), word(2)) else {
                        return Ok(());
                    };
                    (12, high - low + 1, 4)
                } else {
                    let Some(pairs) = word(1) else {
                        return Ok(());
                    };
                    (8, pairs, 8)
                };
                let left = (code.len() - operands - header) as i64;
                let name = if op == 0xaa {
                    "tableswitch"
                } else {
                    "lookupswitch"
                };
                if entries < 0 || entries * entry_bytes > left {
                    return Err(format!(
                        "{name} at code offset {pc} claims {entries} entries, but only \
                         {left} bytes of code follow"
                    ));
                }
                operands - pc + header + (entries * entry_bytes) as usize
            }
            0x00..=0x0f
            | 0x1a..=0x35
            | 0x3b..=0x83
            | 0x85..=0x98
            | 0xac..=0xb1
            | 0xbe
            | 0xbf
            | 0xc2
            | 0xc3 => 1,
            _ => return Ok(()),
        };
        pc += length;
    }
    Ok(())
}

fn sorted_entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut entries = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<Vec<_>>>()?;
    entries.sort();
    Ok(entries)
}

/// The callback methods of the common AWT/Swing listener interfaces.
fn listener_methods(interface: &str) -> Option<&'static [&'static str]> {
    Some(match interface {
        "ActionListener" => &["actionPerformed"],
        "ItemListener" => &["itemStateChanged"],
        "ChangeListener" => &["stateChanged"],
        "ListSelectionListener" | "TreeSelectionListener" => &["valueChanged"],
        "AdjustmentListener" => &["adjustmentValueChanged"],
        "TextListener" => &["textValueChanged"],
        "CaretListener" => &["caretUpdate"],
        "PropertyChangeListener" => &["propertyChange"],
        "DocumentListener" => &["insertUpdate", "removeUpdate", "changedUpdate"],
        "FocusListener" => &["focusGained", "focusLost"],
        "KeyListener" => &["keyTyped", "keyPressed", "keyReleased"],
        "MouseListener" => &[
            "mouseClicked",
            "mousePressed",
            "mouseReleased",
            "mouseEntered",
            "mouseExited",
        ],
        "MouseMotionListener" => &["mouseDragged", "mouseMoved"],
        "MouseWheelListener" => &["mouseWheelMoved"],
        "ComponentListener" => &[
            "componentResized",
            "componentMoved",
            "componentShown",
            "componentHidden",
        ],
        "WindowListener" => &[
            "windowOpened",
            "windowClosing",
            "windowClosed",
            "windowIconified",
            "windowDeiconified",
            "windowActivated",
            "windowDeactivated",
        ],
        "WindowFocusListener" => &["windowGainedFocus", "windowLostFocus"],
        "WindowStateListener" => &["windowStateChanged"],
        _ => return None,
    })
}

fn one_argument(descriptor: &str) -> bool {
    descriptor
        .strip_prefix("(L")
        .and_then(|rest| rest.split_once(";)"))
        .is_some_and(|(class, _)| !class.contains(';'))
}

fn takes_one_event(descriptor: &str) -> bool {
    one_argument(descriptor)
        && descriptor
            .split_once(";)")
            .is_some_and(|(param, _)| param.ends_with("Event"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_parameter_shapes() {
        assert!(one_argument("(Ljava/awt/event/ActionEvent;)V"));
        assert!(!one_argument("(Ljava/lang/String;Ljava/lang/String;)V"));
        assert!(!one_argument("()V"));
        assert!(takes_one_event("(Lorg/x/SliderEvent;)V"));
        assert!(!takes_one_event("(Ljava/lang/String;)V"));
    }

    #[test]
    fn switch_tables_longer_than_the_code_are_refused() {
        // tableswitch at 0: 3 bytes of padding, default 0, low 0, high i32::MAX.
        let mut code = vec![
            0xaa, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff,
        ];
        let e = check_switches(&code).unwrap_err();
        assert!(e.contains("tableswitch at code offset 0"), "{e}");
        // One entry (low = high = 0), then `return`.
        code[12..16].copy_from_slice(&[0, 0, 0, 0]);
        code.extend([0, 0, 0, 8, 0xb1]);
        assert_eq!(check_switches(&code), Ok(()));
        // lookupswitch after a nop: padding 2, default 0, npairs 2^30 (8 GB of pairs).
        let code = [0x00, 0xab, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0];
        let e = check_switches(&code).unwrap_err();
        assert!(e.contains("lookupswitch at code offset 1"), "{e}");
    }

    #[test]
    fn a_class_whose_switch_range_overflows_is_an_error_naming_it() {
        // Found by `cargo xtask fuzz` (class_file): javac's Dialog.class mutated until one
        // method holds a tableswitch whose range does not fit an i32; cafebabe 0.9
        // panicked on `high - low + 1`.
        let bytes = include_bytes!("../tests/data/fuzz/tableswitch-overflow.class");
        let err = ClassDb::from_bytes("fuzz/crash.class", bytes)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("fuzz/crash.class: "), "{err}");
        assert!(err.contains("tableswitch"), "{err}");
    }

    #[test]
    fn errors_name_the_file_and_the_jar_entry() {
        let err = ClassDb::from_bytes("dir/Broken.class", b"\xCA\xFE\xBA\xBE\x00").unwrap_err();
        assert!(err.to_string().starts_with("dir/Broken.class: "), "{err}");

        let mut db = ClassDb::default();
        let err = db
            .add("lib/app.jar", Some("pkg/A.class"), b"junk")
            .unwrap_err();
        assert!(
            err.to_string().starts_with("lib/app.jar!pkg/A.class: "),
            "{err}"
        );
        assert_eq!(db.classes().count(), 0);
    }

    #[test]
    fn unknown_methods_have_no_fields() {
        let db = ClassDb::default();
        let m = MethodRef {
            class: "Nope".into(),
            name: "run".into(),
            descriptor: "()V".into(),
        };
        assert!(db.read_write(&m).is_empty());
        assert!(db.reachable(&m).is_empty());
    }
}

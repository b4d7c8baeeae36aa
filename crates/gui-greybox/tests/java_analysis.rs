//! The Java ClassDB on real javac output: the paper's Listing 1 (tests/data/listing1/java),
//! listener shapes beyond lambdas, broken inputs and recursion.
//!
//! These tests need a JDK (`javac`); without one they fail saying what to install.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use gui_greybox::ReadWrite;
use gui_greybox::java::{ClassDb, ClassError, JarLimits, JavaListener, MethodRef, compile_java};

fn listing1_sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/listing1/java")
}

fn compile(sources: &Path, out: &Path) -> PathBuf {
    compile_java(sources, out).unwrap_or_else(|e| panic!("{e}"))
}

fn load_ok(paths: &[PathBuf]) -> ClassDb {
    let (db, errors) = ClassDb::load(paths);
    assert!(errors.is_empty(), "{errors:?}");
    db
}

/// Compiles Java sources given as (file name, text) into `dir/out`.
fn compile_inline(dir: &Path, files: &[(&str, &str)]) -> PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    for (name, text) in files {
        std::fs::write(src.join(name), text).unwrap();
    }
    compile(&src, &dir.join("out"))
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn by_label<'l>(listeners: &'l [JavaListener], label: &str) -> &'l JavaListener {
    let found: Vec<_> = listeners
        .iter()
        .filter(|l| l.label.as_deref() == Some(label))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one listener labelled {label}: {listeners:#?}"
    );
    found[0]
}

fn method(class: &str, name: &str, descriptor: &str) -> MethodRef {
    MethodRef {
        class: class.into(),
        name: name.into(),
        descriptor: descriptor.into(),
    }
}

#[test]
fn listing1_handlers_read_and_write_the_fields_of_figure_2() {
    let tmp = tempfile::tempdir().unwrap();
    let out = compile(&listing1_sources(), tmp.path());
    let db = load_ok(&[out]);
    assert_eq!(
        db.classes().collect::<Vec<_>>(),
        ["Dialog", "Log", "MainWindow"]
    );

    let listeners = db.listeners();
    assert_eq!(listeners.len(), 4, "{listeners:#?}");
    for (label, owner, target) in [
        ("e1", "MainWindow", "e1"),
        ("e2", "MainWindow", "e2"),
        ("e3", "MainWindow", "e3"),
        ("e4", "Dialog", "e4"),
    ] {
        let l = by_label(&listeners, label);
        assert_eq!(l.owner, owner);
        assert_eq!(l.component, "javax.swing.JButton");
        assert_eq!(l.register, "addActionListener");
        // The handler is the lambda's synthetic method, which calls eN().
        assert_eq!(l.handler.class, owner);
        assert!(l.handler.name.starts_with("lambda$"), "{}", l.handler);
        let reached = db.reachable(&l.handler);
        assert!(
            reached.contains(&method(owner, target, "()V")),
            "{label}: {reached:?}"
        );
    }

    let rw = |label: &str| -> ReadWrite { db.read_write(&by_label(&listeners, label).handler) };
    let (e1, e2, e3, e4) = (rw("e1"), rw("e2"), rw("e3"), rw("e4"));

    assert_eq!(e1.writes, set(&["MainWindow.enabled"]));
    assert!(e1.reads.is_empty(), "{e1:?}");
    assert_eq!(e2.reads, set(&["MainWindow.text"]));
    assert_eq!(e2.writes, set(&["MainWindow.text"]));
    // e3 reads enabled and (else branch) text; `new Dialog(this)` is a constructor of a
    // fresh object, so its store into Dialog.mainWindow is not a write of e3.
    assert_eq!(e3.reads, set(&["MainWindow.enabled", "MainWindow.text"]));
    assert!(e3.writes.is_empty(), "{e3:?}");
    for later in [&e1, &e2, &e4] {
        assert_eq!(e3.flows_into(later), 0);
    }
    assert_eq!(e4.reads, set(&["Dialog.mainWindow"]));
    assert_eq!(e4.writes, set(&["MainWindow.text"]));

    // The dependencies Section 3 names: e1 → e3 (enabled), e4 → e2 (text).
    assert_eq!(e1.flows_into(&e3), 1);
    assert_eq!(e4.flows_into(&e2), 1);
    assert_eq!(e1.flows_into(&e2), 0);
    assert_eq!(e2.flows_into(&e1), 0);

    // The handler methods themselves, as Listing 2 shows them.
    let e4_method = db.find_method("Dialog", "e4").unwrap();
    assert_eq!(e4_method, method("Dialog", "e4", "()V"));
    assert_eq!(db.read_write(&e4_method), e4);
    assert!(
        db.callees(&e4_method)
            .contains(&method("Dialog", "closeDialog", "()V"))
    );
}

#[test]
fn listing1_from_a_jar_names_the_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let out = compile(&listing1_sources(), &tmp.path().join("out"));
    let jar = tmp.path().join("listing1.jar");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&jar).unwrap());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for class in ["MainWindow", "Dialog", "Log"] {
        zip.start_file(format!("{class}.class"), options).unwrap();
        zip.write_all(&std::fs::read(out.join(format!("{class}.class"))).unwrap())
            .unwrap();
    }
    let truncated = std::fs::read(out.join("Log.class")).unwrap();
    zip.start_file("broken/Half.class", options).unwrap();
    zip.write_all(&truncated[..truncated.len() / 2]).unwrap();
    zip.start_file("META-INF/MANIFEST.MF", options).unwrap();
    zip.write_all(b"Manifest-Version: 1.0\n").unwrap();
    zip.finish().unwrap();

    let (db, errors) = ClassDb::load(std::slice::from_ref(&jar));
    assert_eq!(errors.len(), 1, "{errors:?}");
    let message = errors[0].to_string();
    assert!(
        message.contains("listing1.jar!broken/Half.class"),
        "{message}"
    );
    assert_eq!(db.listeners().len(), 4);
    assert!(
        db.source_of("Dialog")
            .is_some_and(|s| s.ends_with("listing1.jar!Dialog.class"))
    );
}

#[test]
fn broken_class_files_are_reported_and_the_rest_still_load() {
    let tmp = tempfile::tempdir().unwrap();
    let out = compile(&listing1_sources(), &tmp.path().join("out"));
    let whole = std::fs::read(out.join("Dialog.class")).unwrap();
    std::fs::write(out.join("Truncated.class"), &whole[..whole.len() - 40]).unwrap();
    std::fs::write(
        out.join("NotAClass.class"),
        b"plain text, not a class file\n",
    )
    .unwrap();
    // Not named .class: ignored inside a directory, reported when given explicitly.
    let notes = tmp.path().join("notes.txt");
    std::fs::write(&notes, b"hello").unwrap();
    std::fs::write(out.join("notes.txt"), b"hello").unwrap();
    let missing = tmp.path().join("missing.class");

    let (db, errors) = ClassDb::load(&[out.clone(), notes.clone(), missing.clone()]);
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 4, "{messages:#?}");
    for name in [
        out.join("NotAClass.class"),
        out.join("Truncated.class"),
        notes,
        missing,
    ] {
        let name = name.display().to_string();
        assert!(
            messages.iter().any(|m| m.contains(&name)),
            "{name} in {messages:#?}"
        );
    }
    assert!(matches!(errors[0], ClassError::Parse { entry: None, .. }));
    assert_eq!(
        db.classes().collect::<Vec<_>>(),
        ["Dialog", "Log", "MainWindow"]
    );
    assert_eq!(db.listeners().len(), 4);
}

const KINDS: &str = r#"
import java.awt.event.ActionEvent;
import java.awt.event.ActionListener;
import java.awt.event.MouseAdapter;
import java.awt.event.MouseEvent;
import javax.swing.JButton;
import javax.swing.JFrame;
import javax.swing.JLabel;

public class Kinds extends JFrame implements ActionListener {
    int clicks;
    int pressed;
    String last;
    static int statics;
    JButton viaField = new JButton("viaField");

    // Declared before the constructor that fills the field it reads.
    void wire() {
        viaField.addActionListener(e -> statics++);
    }

    Kinds() {
        JButton anon = new JButton("anon");
        anon.addActionListener(new ActionListener() {
            public void actionPerformed(ActionEvent e) {
                clicks++;
            }
        });
        JButton named = new JButton("named");
        named.addActionListener(new Named(this));
        JButton self = new JButton("self");
        self.addActionListener(this);
        JButton ref = new JButton("ref");
        ref.addActionListener(this::onRef);
        JLabel mouse = new JLabel("mouse");
        mouse.addMouseListener(new MouseAdapter() {
            @Override
            public void mousePressed(MouseEvent e) {
                pressed++;
            }
        });
        wire();
        Runnable notAListener = () -> last = "never registered";
        notAListener.run();
    }

    public void actionPerformed(ActionEvent e) {
        last = "self " + clicks;
    }

    void onRef(ActionEvent e) {
        ping(3);
    }

    void ping(int n) {
        if (n > 0) pong(n - 1);
        clicks++;
    }

    void pong(int n) {
        if (n > 0) ping(n - 1);
        last = null;
    }

    int countdown(int n) {
        return n <= 0 ? pressed : countdown(n - 1);
    }

    static class Named implements ActionListener {
        final Kinds owner;

        Named(Kinds owner) {
            this.owner = owner;
        }

        public void actionPerformed(ActionEvent e) {
            owner.pressed = 0;
        }
    }
}
"#;

#[test]
fn anonymous_named_self_method_reference_and_adapter_listeners() {
    let tmp = tempfile::tempdir().unwrap();
    let db = load_ok(&[compile_inline(tmp.path(), &[("Kinds.java", KINDS)])]);
    let listeners = db.listeners();
    assert_eq!(listeners.len(), 6, "{listeners:#?}");

    let action = "(Ljava/awt/event/ActionEvent;)V";
    let anon = by_label(&listeners, "anon");
    assert_eq!(anon.handler, method("Kinds$1", "actionPerformed", action));
    assert_eq!(db.read_write(&anon.handler).writes, set(&["Kinds.clicks"]));

    let named = by_label(&listeners, "named");
    assert_eq!(
        named.handler,
        method("Kinds$Named", "actionPerformed", action)
    );
    let rw = db.read_write(&named.handler);
    assert_eq!(rw.reads, set(&["Kinds$Named.owner"]));
    assert_eq!(rw.writes, set(&["Kinds.pressed"]));

    let self_ = by_label(&listeners, "self");
    assert_eq!(self_.handler, method("Kinds", "actionPerformed", action));
    assert_eq!(db.read_write(&self_.handler).writes, set(&["Kinds.last"]));

    let by_ref = by_label(&listeners, "ref");
    assert_eq!(by_ref.handler, method("Kinds", "onRef", action));

    let mouse = by_label(&listeners, "mouse");
    assert_eq!(mouse.component, "javax.swing.JLabel");
    assert_eq!(mouse.register, "addMouseListener");
    assert_eq!(
        mouse.handler,
        method("Kinds$2", "mousePressed", "(Ljava/awt/event/MouseEvent;)V")
    );
    assert_eq!(
        db.read_write(&mouse.handler).writes,
        set(&["Kinds.pressed"])
    );

    let via_field = by_label(&listeners, "viaField");
    assert_eq!(via_field.owner, "Kinds");
    assert!(via_field.handler.name.starts_with("lambda$wire$"));
    assert_eq!(
        db.read_write(&via_field.handler).writes,
        set(&["Kinds.statics"])
    );
    assert!(listeners.iter().all(|l| l.owner == "Kinds"));
}

#[test]
fn recursive_and_mutually_recursive_calls_terminate() {
    let tmp = tempfile::tempdir().unwrap();
    let db = load_ok(&[compile_inline(tmp.path(), &[("Kinds.java", KINDS)])]);

    let on_ref = db.find_method("Kinds", "onRef").unwrap();
    let rw = db.read_write(&on_ref);
    assert_eq!(rw.reads, set(&["Kinds.clicks"]));
    assert_eq!(rw.writes, set(&["Kinds.clicks", "Kinds.last"]));
    let reached: Vec<String> = db
        .reachable(&on_ref)
        .iter()
        .map(|m| m.name.clone())
        .collect();
    assert_eq!(reached, ["onRef", "ping", "pong"]);
    // Memoised answers are the same answers.
    assert_eq!(db.read_write(&on_ref), rw);

    let countdown = db.find_method("Kinds", "countdown").unwrap();
    assert_eq!(db.read_write(&countdown).reads, set(&["Kinds.pressed"]));
    assert_eq!(db.callees(&countdown), BTreeSet::from([countdown.clone()]));
}

#[test]
fn calls_resolve_up_the_superclass_chain_inside_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let out = compile_inline(
        tmp.path(),
        &[
            (
                "Base.java",
                "class Base { int hits; void bump() { hits++; } }",
            ),
            (
                "Child.java",
                "class Child extends Base {\n\
                 int own;\n\
                 Child() { super(); own = 1; }\n\
                 void act() { bump(); toString(); new Base(); }\n\
                 }",
            ),
        ],
    );
    let db = load_ok(&[out]);
    let act = db.find_method("Child", "act").unwrap();
    assert_eq!(
        db.callees(&act),
        BTreeSet::from([method("Base", "bump", "()V")])
    );
    let rw = db.read_write(&act);
    assert_eq!(rw.writes, set(&["Base.hits"]));
    // Inherited lookup for find_method, too.
    assert_eq!(
        db.find_method("Child", "bump"),
        Some(method("Base", "bump", "()V"))
    );
    // A constructor follows its own super() chain (Base.<init> writes nothing).
    let ctor = db.find_method("Child", "<init>").unwrap();
    assert!(db.callees(&ctor).contains(&method("Base", "<init>", "()V")));
    assert_eq!(db.read_write(&ctor).writes, set(&["Child.own"]));
}

#[test]
fn compile_errors_name_javac_and_the_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("Bad.java"), "class Bad { int x = ; }").unwrap();
    let err = compile_java(&src, &tmp.path().join("out")).unwrap_err();
    assert!(matches!(err, ClassError::Javac { .. }), "{err}");
    let message = err.to_string();
    assert!(message.contains("javac failed"), "{message}");
    assert!(message.contains(&src.display().to_string()), "{message}");
    assert!(message.contains("Bad.java"), "{message}");

    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert!(matches!(
        compile_java(&empty, &tmp.path().join("out")),
        Err(ClassError::NoSources { .. })
    ));
}

#[test]
fn non_ascii_class_method_and_field_names_are_analysed() {
    let tmp = tempfile::tempdir().unwrap();
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/unicode");
    let db = load_ok(&[compile(&sources, tmp.path())]);
    assert_eq!(db.classes().collect::<Vec<_>>(), ["Grüße", "Straße"]);

    let wire = db.find_method("Grüße", "verdrahten").unwrap();
    assert!(
        db.callees(&wire)
            .contains(&method("Grüße", "länge", "(Ljava/lang/String;[D)J")),
        "{:?}",
        db.callees(&wire)
    );
    let listeners = db.listeners();
    assert_eq!(listeners.len(), 2, "{listeners:#?}");
    assert!(
        listeners
            .iter()
            .all(|l| l.owner == "Grüße" && l.label.as_deref() == Some("Grüß Gott"))
    );
    // The first lambda calls grüßen(Straße), which counts in zähler; the second resets it.
    let greet = method("Grüße", "grüßen", "(LStraße;)V");
    let greeting = listeners
        .iter()
        .find(|l| db.reachable(&l.handler).contains(&greet))
        .unwrap_or_else(|| panic!("no handler reaches {greet}: {listeners:#?}"));
    let rw = db.read_write(&greeting.handler);
    assert_eq!(
        rw.reads,
        set(&["Grüße.straße", "Grüße.zähler", "Straße.name"])
    );
    assert_eq!(rw.writes, set(&["Grüße.zähler"]));
}

/// Writes a jar of `(entry name, bytes)` members, deflated, in order.
fn write_jar(path: &Path, members: &[(&str, &[u8])]) {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in members {
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
}

fn listing1_class(out: &Path, class: &str) -> Vec<u8> {
    std::fs::read(out.join(format!("{class}.class"))).unwrap()
}

#[test]
fn a_jar_member_over_the_size_limit_is_refused_before_it_is_inflated() {
    let tmp = tempfile::tempdir().unwrap();
    let out = compile(&listing1_sources(), &tmp.path().join("out"));
    let jar = tmp.path().join("bomb.jar");
    // 65 MiB of zeros deflate to about 64 KiB.
    let bomb = vec![0u8; 65 << 20];
    write_jar(
        &jar,
        &[
            ("pkg/Bomb.class", &bomb),
            ("Log.class", &listing1_class(&out, "Log")),
        ],
    );
    drop(bomb);
    assert!(std::fs::metadata(&jar).unwrap().len() < 1 << 20);

    let (db, errors) = ClassDb::load(std::slice::from_ref(&jar));
    assert_eq!(errors.len(), 1, "{errors:?}");
    let message = errors[0].to_string();
    assert!(message.contains("bomb.jar!pkg/Bomb.class"), "{message}");
    assert!(
        message.contains("over the limit of 67108864 bytes"),
        "{message}"
    );
    assert_eq!(db.classes().collect::<Vec<_>>(), ["Log"]);
}

/// Sets the uncompressed size that the local and the central header of the member `name`
/// declare, as a crafted jar would.
fn understate_size(jar: &Path, name: &str, declared: u32) {
    let mut bytes = std::fs::read(jar).unwrap();
    let mut patched = 0;
    // (header signature, offset of the uncompressed size, offset of the name length)
    for (signature, size_at, name_len_at, name_at) in
        [(b"PK\x03\x04", 22, 26, 30), (b"PK\x01\x02", 24, 28, 46)]
    {
        let mut at = 0;
        while let Some(i) = bytes[at..]
            .windows(4)
            .position(|w| w == signature.as_slice())
        {
            let h = at + i;
            let len = u16::from_le_bytes([bytes[h + name_len_at], bytes[h + name_len_at + 1]]);
            if &bytes[h + name_at..h + name_at + usize::from(len)] == name.as_bytes() {
                bytes[h + size_at..h + size_at + 4].copy_from_slice(&declared.to_le_bytes());
                patched += 1;
            }
            at = h + 4;
        }
    }
    assert_eq!(patched, 2, "both headers of {name}");
    std::fs::write(jar, bytes).unwrap();
}

#[test]
fn a_jar_member_that_inflates_past_its_declared_size_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = compile(&listing1_sources(), &tmp.path().join("out"));
    let jar = tmp.path().join("liar.jar");
    write_jar(
        &jar,
        &[
            ("Log.class", &listing1_class(&out, "Log")),
            ("pkg/Liar.class", &vec![0u8; 1 << 20]),
        ],
    );
    understate_size(&jar, "pkg/Liar.class", 100);
    let limits = JarLimits {
        member_bytes: 4096,
        ..JarLimits::default()
    };
    let (db, errors) = ClassDb::load_with(std::slice::from_ref(&jar), &limits);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let message = errors[0].to_string();
    assert!(message.contains("liar.jar!pkg/Liar.class"), "{message}");
    assert_eq!(db.classes().collect::<Vec<_>>(), ["Log"]);
}

#[test]
fn a_jar_past_its_total_limit_is_read_no_further() {
    let tmp = tempfile::tempdir().unwrap();
    let out = compile(&listing1_sources(), &tmp.path().join("out"));
    let (log, dialog) = (listing1_class(&out, "Log"), listing1_class(&out, "Dialog"));
    let jar = tmp.path().join("big.jar");
    write_jar(
        &jar,
        &[
            ("Log.class", &log),
            ("Dialog.class", &dialog),
            ("MainWindow.class", &listing1_class(&out, "MainWindow")),
        ],
    );
    let limits = JarLimits {
        jar_bytes: (log.len() + dialog.len() - 1) as u64,
        ..JarLimits::default()
    };
    let (db, errors) = ClassDb::load_with(std::slice::from_ref(&jar), &limits);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let message = errors[0].to_string();
    assert!(message.contains("big.jar!Dialog.class"), "{message}");
    assert!(message.contains("limit per jar"), "{message}");
    assert_eq!(db.classes().collect::<Vec<_>>(), ["Log"]);
}

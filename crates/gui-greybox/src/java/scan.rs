//! One class file to the facts the ClassDB keeps about it: per method the fields it
//! reads and writes and the methods it calls (Section 4.3.1), and per class the listener
//! registrations found by a symbolic run of each method's operand stack.
//!
//! The operand-stack run is deliberately shallow. It walks the instructions in order,
//! ignores branches (a jump or return only empties the stack), and knows just enough
//! values to follow a button from `new JButton("e1")` through locals and `this` fields to
//! the `addActionListener` call that receives a lambda, a listener object or `this`.

use std::collections::{BTreeSet, HashMap, HashSet};

use cafebabe::attributes::{AttributeData, BootstrapMethodEntry, CodeData};
use cafebabe::bytecode::Opcode;
use cafebabe::constant_pool::{
    BootstrapArgument, LiteralConstant, Loadable, MemberRef, ReferenceKind,
};
use cafebabe::{ClassFile, MethodAccessFlags, MethodInfo};
use serde::Serialize;

use super::MethodRef;

/// What one class contributes to the ClassDB.
#[derive(Debug, Clone, Serialize)]
pub(super) struct ClassFacts {
    /// Binary name with dots: `pkg.Outer$Inner`.
    pub name: String,
    pub super_class: Option<String>,
    pub methods: Vec<MethodFacts>,
    pub registrations: Vec<Registration>,
}

impl ClassFacts {
    pub fn method(&self, name: &str, descriptor: &str) -> Option<&MethodFacts> {
        self.methods
            .iter()
            .find(|m| m.name == name && m.descriptor == descriptor)
    }
}

/// A field as the instruction names it: the owner class of the field reference (dotted)
/// and the field name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub(super) struct FieldRef {
    pub class: String,
    pub name: String,
}

/// The direct facts of one method: nothing here follows a call.
#[derive(Debug, Clone, Serialize)]
pub(super) struct MethodFacts {
    pub name: String,
    pub descriptor: String,
    pub is_static: bool,
    pub reads: BTreeSet<FieldRef>,
    pub writes: BTreeSet<FieldRef>,
    /// Call targets as the instructions name them, resolved against the ClassDB only
    /// when a query needs them (the target's class may be loaded later).
    pub calls: BTreeSet<MethodRef>,
}

/// `component.addXListener(listener)` found in the code of a class.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Registration {
    pub component: String,
    pub label: Option<String>,
    /// The registering method's name, e.g. `addActionListener`.
    pub register: String,
    /// The listener interface from the registering method's parameter, dotted:
    /// `java.awt.event.ActionListener`.
    pub listener_type: String,
    pub listener: ListenerValue,
}

#[derive(Debug, Clone, Serialize)]
pub(super) enum ListenerValue {
    /// A lambda's synthetic method or a method reference's target: that method runs.
    Method(MethodRef),
    /// An object of this class (anonymous, inner, named or `this`): its implementation of
    /// the listener interface runs.
    Object(String),
}

/// Internal names use `/`; the ClassDB speaks dotted binary names.
pub(super) fn dotted(internal: &str) -> String {
    internal.replace('/', ".")
}

pub(super) fn scan_class(class: &ClassFile<'_>) -> ClassFacts {
    let name = dotted(&class.this_class);
    let bootstrap: &[BootstrapMethodEntry<'_>] = class
        .attributes
        .iter()
        .find_map(|a| match &a.data {
            AttributeData::BootstrapMethods(entries) => Some(entries.as_slice()),
            _ => None,
        })
        .unwrap_or(&[]);

    let mut scan = ClassScan {
        class: name.clone(),
        bootstrap,
        fields: HashMap::new(),
        next_object: 0,
    };
    // Two passes: the first only learns what the class stores in its own fields (a button
    // created in the constructor, wired up in a method declared before it); the second
    // records the facts.
    for method in &class.methods {
        if let Some(code) = code_of(method) {
            scan.run(method, code, &mut Sink::default());
        }
    }
    let mut methods = Vec::with_capacity(class.methods.len());
    let mut registrations = Vec::new();
    for method in &class.methods {
        let mut sink = Sink::default();
        if let Some(code) = code_of(method) {
            scan.run(method, code, &mut sink);
        }
        registrations.append(&mut sink.registrations);
        methods.push(MethodFacts {
            name: method.name.to_string(),
            descriptor: method.descriptor.to_string(),
            is_static: method.access_flags.contains(MethodAccessFlags::STATIC),
            reads: sink.reads,
            writes: sink.writes,
            calls: sink.calls,
        });
    }
    ClassFacts {
        name,
        super_class: class.super_class.as_ref().map(|s| dotted(s)),
        methods,
        registrations,
    }
}

fn code_of<'m, 'a>(method: &'m MethodInfo<'a>) -> Option<&'m CodeData<'a>> {
    method.attributes.iter().find_map(|a| match &a.data {
        AttributeData::Code(code) => Some(code),
        _ => None,
    })
}

/// A value on the symbolic operand stack or in a local.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Unknown,
    /// A long or double: two slots, which matters to `pop2` and the `dup2` family.
    Wide,
    This,
    Str(String),
    /// An object created by `new` in this class; `id` tells copies of the same object
    /// apart from other objects of the same class, so the constructor's string argument
    /// can label every copy `dup` made.
    Object {
        id: u32,
        class: String,
        label: Option<String>,
    },
    /// A lambda or method reference (invokedynamic through `LambdaMetafactory`).
    Lambda(MethodRef),
}

impl Value {
    fn slots(&self) -> usize {
        if *self == Value::Wide { 2 } else { 1 }
    }

    fn of_type(descriptor: &str) -> Value {
        if matches!(descriptor.as_bytes().first(), Some(b'J' | b'D')) {
            Value::Wide
        } else {
            Value::Unknown
        }
    }
}

#[derive(Default)]
struct Sink {
    reads: BTreeSet<FieldRef>,
    writes: BTreeSet<FieldRef>,
    calls: BTreeSet<MethodRef>,
    registrations: Vec<Registration>,
}

struct ClassScan<'c, 'a> {
    class: String,
    bootstrap: &'c [BootstrapMethodEntry<'a>],
    /// The last interesting value stored in each field, keyed like the ClassDB's field
    /// names: shared by all methods of the class.
    fields: HashMap<FieldRef, Value>,
    next_object: u32,
}

struct Frame {
    stack: Vec<Value>,
    locals: HashMap<u16, Value>,
}

impl Frame {
    fn push(&mut self, v: Value) {
        self.stack.push(v);
    }

    fn pop(&mut self) -> Value {
        self.stack.pop().unwrap_or(Value::Unknown)
    }

    fn pop_n(&mut self, n: usize) {
        for _ in 0..n {
            self.pop();
        }
    }

    /// Number of entries from the top (after skipping `skip` entries) that make up
    /// `slots` JVM slots.
    fn entries_for(&self, skip: usize, slots: usize) -> usize {
        let mut seen = 0;
        let mut entries = 0;
        for v in self.stack.iter().rev().skip(skip) {
            if seen >= slots {
                break;
            }
            seen += v.slots();
            entries += 1;
        }
        entries.max(1)
    }

    fn pop_slots(&mut self, slots: usize) {
        let n = self.entries_for(0, slots);
        self.pop_n(n);
    }

    /// The `dup` family: copy the top `take` slots and insert the copy below the next
    /// `below` slots.
    fn dup(&mut self, take: usize, below: usize) {
        let n_take = self.entries_for(0, take);
        let n_below = if below == 0 {
            0
        } else {
            self.entries_for(n_take, below)
        };
        while self.stack.len() < n_take + n_below {
            self.stack.insert(0, Value::Unknown);
        }
        let top = self.stack.len();
        let copy: Vec<Value> = self.stack[top - n_take..].to_vec();
        let at = top - n_take - n_below;
        self.stack.splice(at..at, copy);
    }

    /// After `<init>` ran on object `id`, every copy of it carries the label.
    fn label_object(&mut self, id: u32, new_label: &str) {
        let relabel = |v: &mut Value| {
            if let Value::Object { id: i, label, .. } = v
                && *i == id
            {
                *label = Some(new_label.to_string());
            }
        };
        self.stack.iter_mut().for_each(relabel);
        self.locals.values_mut().for_each(relabel);
    }
}

/// Parameters of a method descriptor (as values of the right width) and its return value
/// (`None` for void).
///
/// The descriptor is walked by characters: class names in it may be any Unicode
/// (`(LStraße;)V`), and a malformed descriptor may put a multi-byte character where a
/// one-letter type belongs.
fn signature(descriptor: &str) -> (Vec<Value>, Option<Value>) {
    let mut params = Vec::new();
    let mut rest = descriptor.strip_prefix('(').unwrap_or(descriptor);
    loop {
        let mut chars = rest.chars();
        let Some(first) = chars.next() else {
            // No `)`: a malformed descriptor has no return type.
            return (params, None);
        };
        if first == ')' {
            let ret = match chars.as_str() {
                "V" => None,
                r => Some(Value::of_type(r)),
            };
            return (params, ret);
        }
        let mut c = first;
        while c == '[' {
            match chars.next() {
                Some(next) => c = next,
                None => break,
            }
        }
        if c == 'L' {
            // The class name runs to `;` (or to the end of a malformed descriptor).
            for next in chars.by_ref() {
                if next == ';' {
                    break;
                }
            }
        }
        params.push(if first == '[' {
            Value::Unknown
        } else {
            Value::of_type(rest)
        });
        rest = chars.as_str();
    }
}

/// The interface named by an `addXListener(LX;)V` descriptor, dotted.
fn listener_type(descriptor: &str) -> Option<String> {
    let inner = descriptor.strip_prefix("(L")?.split_once(";)")?.0;
    Some(dotted(inner))
}

fn is_registration(name: &str, descriptor: &str) -> bool {
    name.starts_with("add") && name.ends_with("Listener") && listener_type(descriptor).is_some()
}

impl<'c, 'a> ClassScan<'c, 'a> {
    fn field(&self, m: &MemberRef<'_>) -> FieldRef {
        FieldRef {
            class: dotted(&m.class_name),
            name: m.name_and_type.name.to_string(),
        }
    }

    fn method_ref(m: &MemberRef<'_>) -> MethodRef {
        MethodRef {
            class: dotted(&m.class_name),
            name: m.name_and_type.name.to_string(),
            descriptor: m.name_and_type.descriptor.to_string(),
        }
    }

    /// The method a lambda or method reference runs, when `invokedynamic` goes through
    /// `LambdaMetafactory` (its second static argument is the implementation handle).
    /// Other bootstraps (string concatenation, records, switch patterns) make no listener.
    fn lambda_target(&self, attr_index: u16) -> Option<MethodRef> {
        let entry = self.bootstrap.get(usize::from(attr_index))?;
        if entry.method.class_name != "java/lang/invoke/LambdaMetafactory" {
            return None;
        }
        match entry.arguments.get(1)? {
            BootstrapArgument::MethodHandle(h)
                if !matches!(
                    h.kind,
                    ReferenceKind::GetField
                        | ReferenceKind::GetStatic
                        | ReferenceKind::PutField
                        | ReferenceKind::PutStatic
                ) =>
            {
                Some(MethodRef {
                    class: dotted(&h.class_name),
                    name: h.member_ref.name.to_string(),
                    descriptor: h.member_ref.descriptor.to_string(),
                })
            }
            _ => None,
        }
    }

    fn run(&mut self, method: &MethodInfo<'_>, code: &CodeData<'_>, sink: &mut Sink) {
        let Some(bytecode) = &code.bytecode else {
            return;
        };
        let is_static = method.access_flags.contains(MethodAccessFlags::STATIC);
        let in_constructor = method.name == "<init>";
        let handlers: HashSet<usize> = code
            .exception_table
            .iter()
            .map(|e| usize::from(e.handler_pc))
            .collect();
        let mut frame = Frame {
            stack: Vec::new(),
            locals: HashMap::new(),
        };
        if !is_static {
            frame.locals.insert(0, Value::This);
        }

        for (offset, op) in &bytecode.opcodes {
            if handlers.contains(offset) {
                frame.stack = vec![Value::Unknown];
            }
            self.step(op, &mut frame, sink, in_constructor);
        }
    }

    fn step(&mut self, op: &Opcode<'_>, f: &mut Frame, sink: &mut Sink, in_constructor: bool) {
        use Opcode as O;
        match op {
            O::Nop | O::Iinc(..) | O::Breakpoint | O::Impdep1 | O::Impdep2 | O::Checkcast(_) => {}

            O::AconstNull
            | O::IconstM1
            | O::Iconst0
            | O::Iconst1
            | O::Iconst2
            | O::Iconst3
            | O::Iconst4
            | O::Iconst5
            | O::Fconst0
            | O::Fconst1
            | O::Fconst2
            | O::Bipush(_)
            | O::Sipush(_)
            | O::Iload(_)
            | O::Fload(_) => f.push(Value::Unknown),
            O::Lconst0 | O::Lconst1 | O::Dconst0 | O::Dconst1 | O::Lload(_) | O::Dload(_) => {
                f.push(Value::Wide)
            }
            O::Ldc(l) | O::LdcW(l) => f.push(match l {
                Loadable::LiteralConstant(LiteralConstant::String(s)) => Value::Str(s.to_string()),
                _ => Value::Unknown,
            }),
            O::Ldc2W(_) => f.push(Value::Wide),
            O::Aload(n) => {
                let v = f.locals.get(n).cloned().unwrap_or(Value::Unknown);
                f.push(v);
            }

            O::Astore(n) => {
                let v = f.pop();
                f.locals.insert(*n, v);
            }
            O::Istore(n) | O::Fstore(n) | O::Lstore(n) | O::Dstore(n) => {
                f.pop();
                f.locals.remove(n);
            }

            O::Iaload | O::Faload | O::Aaload | O::Baload | O::Caload | O::Saload => {
                f.pop_n(2);
                f.push(Value::Unknown);
            }
            O::Laload | O::Daload => {
                f.pop_n(2);
                f.push(Value::Wide);
            }
            O::Iastore
            | O::Lastore
            | O::Fastore
            | O::Dastore
            | O::Aastore
            | O::Bastore
            | O::Castore
            | O::Sastore => f.pop_n(3),

            O::Pop => f.pop_n(1),
            O::Pop2 => f.pop_slots(2),
            O::Dup => f.dup(1, 0),
            O::DupX1 => f.dup(1, 1),
            O::DupX2 => f.dup(1, 2),
            O::Dup2 => f.dup(2, 0),
            O::Dup2X1 => f.dup(2, 1),
            O::Dup2X2 => f.dup(2, 2),
            O::Swap => {
                let a = f.pop();
                let b = f.pop();
                f.push(a);
                f.push(b);
            }

            O::Iadd
            | O::Isub
            | O::Imul
            | O::Idiv
            | O::Irem
            | O::Iand
            | O::Ior
            | O::Ixor
            | O::Ishl
            | O::Ishr
            | O::Iushr
            | O::Fadd
            | O::Fsub
            | O::Fmul
            | O::Fdiv
            | O::Frem
            | O::Lcmp
            | O::Fcmpl
            | O::Fcmpg
            | O::Dcmpl
            | O::Dcmpg => {
                f.pop_n(2);
                f.push(Value::Unknown);
            }
            O::Ladd
            | O::Lsub
            | O::Lmul
            | O::Ldiv
            | O::Lrem
            | O::Land
            | O::Lor
            | O::Lxor
            | O::Lshl
            | O::Lshr
            | O::Lushr
            | O::Dadd
            | O::Dsub
            | O::Dmul
            | O::Ddiv
            | O::Drem => {
                f.pop_n(2);
                f.push(Value::Wide);
            }
            O::Ineg
            | O::Fneg
            | O::I2f
            | O::I2b
            | O::I2c
            | O::I2s
            | O::F2i
            | O::L2i
            | O::L2f
            | O::D2i
            | O::D2f
            | O::Arraylength
            | O::Instanceof(_)
            | O::Newarray(_)
            | O::Anewarray(_) => {
                f.pop();
                f.push(Value::Unknown);
            }
            O::Lneg | O::Dneg | O::I2l | O::I2d | O::F2l | O::F2d | O::L2d | O::D2l => {
                f.pop();
                f.push(Value::Wide);
            }
            O::Multianewarray(_, dims) => {
                f.pop_n(usize::from(*dims));
                f.push(Value::Unknown);
            }

            O::Ifeq(_)
            | O::Ifne(_)
            | O::Iflt(_)
            | O::Ifge(_)
            | O::Ifgt(_)
            | O::Ifle(_)
            | O::Ifnull(_)
            | O::Ifnonnull(_)
            | O::Monitorenter
            | O::Monitorexit => f.pop_n(1),
            O::IfIcmpeq(_)
            | O::IfIcmpne(_)
            | O::IfIcmplt(_)
            | O::IfIcmpge(_)
            | O::IfIcmpgt(_)
            | O::IfIcmple(_)
            | O::IfAcmpeq(_)
            | O::IfAcmpne(_) => f.pop_n(2),
            // No fall-through: whatever follows is reached by a jump with its own stack,
            // which this straight-line run does not know.
            O::Goto(_)
            | O::Jsr(_)
            | O::Ret(_)
            | O::Return
            | O::Ireturn
            | O::Lreturn
            | O::Freturn
            | O::Dreturn
            | O::Areturn
            | O::Athrow
            | O::Tableswitch(_)
            | O::Lookupswitch(_) => f.stack.clear(),

            O::New(class) => {
                self.next_object += 1;
                f.push(Value::Object {
                    id: self.next_object,
                    class: dotted(class),
                    label: None,
                });
            }

            O::Getstatic(m) => {
                let field = self.field(m);
                let v = self
                    .fields
                    .get(&field)
                    .cloned()
                    .unwrap_or_else(|| Value::of_type(&m.name_and_type.descriptor));
                sink.reads.insert(field);
                f.push(v);
            }
            O::Getfield(m) => {
                f.pop();
                let field = self.field(m);
                let v = self
                    .fields
                    .get(&field)
                    .cloned()
                    .unwrap_or_else(|| Value::of_type(&m.name_and_type.descriptor));
                sink.reads.insert(field);
                f.push(v);
            }
            O::Putstatic(m) | O::Putfield(m) => {
                let v = f.pop();
                if matches!(op, O::Putfield(_)) {
                    f.pop();
                }
                let field = self.field(m);
                if matches!(v, Value::Object { .. } | Value::Lambda(_) | Value::Str(_)) {
                    self.fields.insert(field.clone(), v);
                }
                sink.writes.insert(field);
            }

            O::Invokevirtual(m) | O::Invokeinterface(m, _) => self.invoke(m, true, f, sink),
            O::Invokestatic(m) => self.invoke(m, false, f, sink),
            O::Invokespecial(m) if m.name_and_type.name == "<init>" => {
                self.construct(m, f, sink, in_constructor)
            }
            O::Invokespecial(m) => self.invoke(m, true, f, sink),
            O::Invokedynamic(indy) => {
                let (params, _) = signature(&indy.name_and_type.descriptor);
                f.pop_n(params.len());
                f.push(match self.lambda_target(indy.attr_index) {
                    Some(target) => Value::Lambda(target),
                    None => Value::Unknown,
                });
            }
        }
    }

    fn invoke(&mut self, m: &MemberRef<'_>, has_receiver: bool, f: &mut Frame, sink: &mut Sink) {
        let (params, ret) = signature(&m.name_and_type.descriptor);
        let mut args: Vec<Value> = (0..params.len()).map(|_| f.pop()).collect();
        args.reverse();
        let receiver = has_receiver.then(|| f.pop());

        let name = &m.name_and_type.name;
        if let (Some(receiver), [listener]) = (&receiver, args.as_slice())
            && is_registration(name, &m.name_and_type.descriptor)
        {
            self.register(m, receiver, listener, sink);
        }
        sink.calls.insert(Self::method_ref(m));
        if let Some(v) = ret {
            f.push(v);
        }
    }

    /// `invokespecial <init>`: labels a fresh component from its string argument. The
    /// constructor is recorded as a call only when it initialises `this` (a `super(..)` or
    /// `this(..)` chain inside a constructor): constructors of other, fresh objects are not
    /// followed (see the module documentation of `java`).
    fn construct(&mut self, m: &MemberRef<'_>, f: &mut Frame, sink: &mut Sink, in_ctor: bool) {
        let (params, _) = signature(&m.name_and_type.descriptor);
        let mut args: Vec<Value> = (0..params.len()).map(|_| f.pop()).collect();
        args.reverse();
        match f.pop() {
            Value::Object { id, .. } => {
                if let Some(Value::Str(label)) = args.first() {
                    f.label_object(id, label);
                }
            }
            Value::This if in_ctor => {
                sink.calls.insert(Self::method_ref(m));
            }
            _ => {}
        }
    }

    fn register(&self, m: &MemberRef<'_>, receiver: &Value, listener: &Value, sink: &mut Sink) {
        let (component, label) = match receiver {
            Value::Object { class, label, .. } => (class.clone(), label.clone()),
            Value::This => (self.class.clone(), None),
            _ => (dotted(&m.class_name), None),
        };
        let listener = match listener {
            Value::Lambda(target) => ListenerValue::Method(target.clone()),
            Value::Object { class, .. } => ListenerValue::Object(class.clone()),
            Value::This => ListenerValue::Object(self.class.clone()),
            other => {
                tracing::debug!(
                    class = %self.class,
                    register = %m.name_and_type.name,
                    ?other,
                    "listener registration with an untracked listener value"
                );
                return;
            }
        };
        sink.registrations.push(Registration {
            component,
            label,
            register: m.name_and_type.name.to_string(),
            listener_type: listener_type(&m.name_and_type.descriptor).unwrap_or_default(),
            listener,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_counts_parameters_and_their_width() {
        let (params, ret) = signature("(IJ[JLjava/lang/String;[[Ljava/lang/Object;D)V");
        assert_eq!(
            params,
            vec![
                Value::Unknown,
                Value::Wide,
                Value::Unknown,
                Value::Unknown,
                Value::Unknown,
                Value::Wide
            ]
        );
        assert_eq!(ret, None);
        assert_eq!(signature("()J").1, Some(Value::Wide));
        assert_eq!(signature("()Ljava/lang/String;").1, Some(Value::Unknown));
    }

    #[test]
    fn signature_walks_non_ascii_descriptors_by_character() {
        let (params, ret) = signature("(LStraße;[LÜber;J)D");
        assert_eq!(params, vec![Value::Unknown, Value::Unknown, Value::Wide]);
        assert_eq!(ret, Some(Value::Wide));
        // Not a valid descriptor, but the class file reader must not panic on it: two-byte
        // characters where one-letter types belong, and no closing parenthesis.
        assert_eq!(
            signature("(éü)V"),
            (vec![Value::Unknown, Value::Unknown], None)
        );
        assert_eq!(
            signature("(Iß"),
            (vec![Value::Unknown, Value::Unknown], None)
        );
        assert_eq!(signature("(LStraße"), (vec![Value::Unknown], None));
    }

    #[test]
    fn registrations_are_add_listener_calls_with_one_interface_argument() {
        assert!(is_registration(
            "addActionListener",
            "(Ljava/awt/event/ActionListener;)V"
        ));
        assert_eq!(
            listener_type("(Ljava/awt/event/MouseListener;)V").as_deref(),
            Some("java.awt.event.MouseListener")
        );
        assert!(!is_registration(
            "add",
            "(Ljava/awt/Component;)Ljava/awt/Component;"
        ));
        assert!(!is_registration("addListener", "(II)V"));
    }

    #[test]
    fn dup_x1_and_dup2_respect_wide_values() {
        let mut f = Frame {
            stack: vec![Value::Str("a".into()), Value::This],
            locals: HashMap::new(),
        };
        f.dup(1, 1);
        assert_eq!(
            f.stack,
            vec![Value::This, Value::Str("a".into()), Value::This]
        );

        let mut f = Frame {
            stack: vec![Value::This, Value::Wide],
            locals: HashMap::new(),
        };
        f.dup(2, 0);
        assert_eq!(f.stack, vec![Value::This, Value::Wide, Value::Wide]);
        f.pop_slots(2);
        f.pop_slots(2);
        assert_eq!(f.stack, vec![Value::This]);
    }
}

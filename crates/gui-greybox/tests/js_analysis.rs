//! The JavaScript read/write analysis on Listing 1, the bundled demo app and small
//! snippets for each registration form and naming rule.

use std::collections::BTreeSet;
use std::path::PathBuf;

use gui_greybox::js::{JsAnalysis, JsConfig, Script};
use gui_greybox::{HandlerRef, ReadWrite};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/js")
        .join(name)
}

fn load(path: PathBuf, name: &str) -> Script {
    let source = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    Script {
        name: name.to_string(),
        source,
    }
}

fn inline(name: &str, source: &str) -> Script {
    Script {
        name: name.to_string(),
        source: source.to_string(),
    }
}

fn analyse(scripts: &[Script]) -> JsAnalysis {
    let analysis = JsAnalysis::analyse(scripts, &JsConfig::default());
    assert!(analysis.errors().is_empty(), "{:?}", analysis.errors());
    analysis
}

fn rw(analysis: &JsAnalysis, function: &str) -> ReadWrite {
    let index = analysis
        .function_named(function)
        .unwrap_or_else(|| panic!("no function {function}"));
    analysis.read_write(index)
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn listing1() -> JsAnalysis {
    analyse(&[load(data("listing1.js"), "listing1.js")])
}

#[test]
fn listing1_read_and_write_sets_match_the_paper() {
    let analysis = listing1();
    let (e1, e2, e3, e4) = (
        rw(&analysis, "e1"),
        rw(&analysis, "e2"),
        rw(&analysis, "e3"),
        rw(&analysis, "e4"),
    );
    assert_eq!(e1.writes, set(&["enabled"]));
    assert!(e1.reads.is_empty(), "{:?}", e1.reads);
    assert_eq!(e2.reads, set(&["text"]));
    assert_eq!(e2.writes, set(&["text"]));
    assert!(e3.reads.contains("enabled"), "{:?}", e3.reads);
    assert!(e3.reads.contains("text"), "{:?}", e3.reads);
    assert!(e4.writes.contains("text"), "{:?}", e4.writes);
    // The EDG edges of Figure 3: e1 → e3 and e4 → e2, nothing between e1 and e2.
    assert_eq!(e1.flows_into(&e3), 1);
    assert_eq!(e4.flows_into(&e2), 1);
    assert_eq!(e1.flows_into(&e2), 0);
    assert_eq!(e2.flows_into(&e1), 0);
}

#[test]
fn listing1_calls_are_followed_into_helpers() {
    let analysis = listing1();
    // e3 opens the dialog and e4 closes it: both write the element through their callees.
    assert!(rw(&analysis, "e3").writes.contains("#dialog.hidden"));
    assert!(rw(&analysis, "e4").writes.contains("#dialog.hidden"));
    let e4 = &analysis.functions()[analysis.function_named("e4").unwrap()];
    assert_eq!(e4.own.writes, set(&["text"]));
    let close = analysis.function_named("closeDialog").unwrap();
    assert_eq!(e4.calls, vec![close]);
}

#[test]
fn listing1_registrations_are_found_with_their_elements() {
    let analysis = listing1();
    let found: Vec<(String, String, Option<String>, String)> = analysis
        .handlers()
        .iter()
        .map(|h| {
            let function = h
                .function
                .and_then(|f| analysis.functions()[f].name.clone());
            (
                h.event_type.clone(),
                h.selector.clone().unwrap_or_default(),
                function,
                h.via.clone(),
            )
        })
        .collect();
    let expected: Vec<_> = (1..=4)
        .map(|i| {
            (
                "click".to_string(),
                format!("#e{i}"),
                Some(format!("e{i}")),
                "addEventListener".to_string(),
            )
        })
        .collect();
    assert_eq!(found, expected);
    assert_eq!(
        analysis.handlers()[0].target,
        "document.getElementById('e1')"
    );
    assert_eq!(analysis.handlers()[0].line, 38);
}

fn demo_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/apps/demo/app.js")
}

fn demo_source() -> String {
    load(demo_path(), "app.js").source
}

fn demo() -> JsAnalysis {
    analyse(&[load(demo_path(), "examples/apps/demo/app.js")])
}

#[test]
fn demo_coupon_is_written_by_apply_and_read_by_checkout() {
    // Bug B: checkout reads `state.coupon.rule.percent`, which applyCoupon never sets.
    let analysis = demo();
    let apply = rw(&analysis, "applyCoupon");
    let checkout = rw(&analysis, "checkout");
    assert!(apply.writes.contains("state.coupon"), "{:?}", apply.writes);
    assert!(
        apply.reads.contains("#cart-coupon.value"),
        "{:?}",
        apply.reads
    );
    for path in [
        "state.coupon",
        "state.coupon.rule",
        "state.coupon.rule.percent",
    ] {
        assert!(
            checkout.reads.contains(path),
            "{path} not in {:?}",
            checkout.reads
        );
    }
    // Through cartTotal.
    assert!(checkout.reads.contains("state.cart.products"));
    assert!(apply.flows_into(&checkout) >= 1);
}

#[test]
fn demo_select_all_flag_flows_into_archive_through_an_alias() {
    // Bug A: archiveSelected reads the flag as `list.allSelected` with `var list = state.list`.
    let analysis = demo();
    let select = rw(&analysis, "selectAllItems");
    let archive = rw(&analysis, "archiveSelected");
    assert!(
        select.writes.contains("state.list.allSelected"),
        "{:?}",
        select.writes
    );
    assert!(
        select.writes.contains("state.list.items[].done"),
        "{:?}",
        select.writes
    );
    assert!(
        archive.reads.contains("state.list.allSelected"),
        "{:?}",
        archive.reads
    );
    assert!(
        archive.writes.contains("state.list.items"),
        "{:?}",
        archive.writes
    );
    assert!(select.flows_into(&archive) >= 2);
    // Locals and parameters are not fields.
    let toggle = rw(&analysis, "toggleItem");
    assert!(
        toggle.reads.iter().all(|p| !p.starts_with("event")),
        "{:?}",
        toggle.reads
    );
    assert!(
        toggle.writes.contains("state.list.items[].done"),
        "{:?}",
        toggle.writes
    );
}

#[test]
fn demo_handlers_of_bind_events_are_found() {
    let analysis = demo();
    let bind_events = analysis.function_named("bindEvents").unwrap();
    let handler = |selector: &str| {
        analysis
            .handlers()
            .iter()
            .find(|h| h.selector.as_deref() == Some(selector))
            .unwrap_or_else(|| panic!("no handler on {selector}"))
    };
    let name_of = |h: &gui_greybox::js::JsHandler| {
        h.function
            .and_then(|f| analysis.functions()[f].name.clone())
    };
    let back = handler("#back-home");
    assert_eq!(
        (back.event_type.as_str(), back.target.as_str()),
        ("click", "byId('back-home')")
    );
    assert_eq!(name_of(back).as_deref(), Some("goHome"));
    assert_eq!(
        name_of(handler("#cart-apply")).as_deref(),
        Some("applyCoupon")
    );
    assert_eq!(
        name_of(handler("#cart-checkout")).as_deref(),
        Some("checkout")
    );
    let login = handler("#login-form");
    assert_eq!(
        (login.event_type.as_str(), name_of(login).as_deref()),
        ("submit", Some("submitLogin"))
    );
    let nav = handler("[data-route]");
    assert_eq!(nav.target, "navButtons[i]");
    assert_eq!(name_of(nav).as_deref(), Some("onNavClick"));
    let keydown = analysis
        .handlers()
        .iter()
        .find(|h| h.event_type == "keydown")
        .unwrap();
    assert_eq!(
        (keydown.target.as_str(), keydown.selector.as_deref()),
        ("document", None)
    );
    // Every `addEventListener` of the source is found and names an application function,
    // including the two in the row builder, whose targets are created at run time.
    let registrations = demo_source().matches(".addEventListener(").count();
    assert_eq!(analysis.handlers().len(), registrations);
    assert!(analysis.handlers().iter().all(|h| h.function.is_some()));
    // bindEvents registers handlers but does not call them.
    let calls = &analysis.functions()[bind_events].calls;
    assert!(!calls.contains(&analysis.function_named("checkout").unwrap()));
}

#[test]
fn function_at_finds_a_function_from_a_devtools_location() {
    let analysis = demo();
    let source = demo_source();
    let line_of = |text: &str| {
        source
            .lines()
            .position(|l| l.starts_with(text))
            .unwrap_or_else(|| panic!("no line starting with {text}")) as u32
    };
    let apply = analysis.function_named("applyCoupon").unwrap();
    let line = line_of("function applyCoupon(");
    let f = &analysis.functions()[apply];
    assert_eq!((f.line, f.column), (line, 0));
    assert_eq!(
        analysis.function_at("examples/apps/demo/app.js", line, 0),
        Some(apply)
    );
    // Positions inside the function, and the served URL instead of the path.
    assert_eq!(
        analysis.function_at("http://127.0.0.1:8000/app.js", line, 20),
        Some(apply)
    );
    assert_eq!(analysis.function_at("app.js", line + 3, 4), Some(apply));
    assert_eq!(analysis.function_at("other.js", line, 0), None);
    // The blank line before the function belongs to no function.
    assert_eq!(analysis.function_at("app.js", line - 1, 0), None);
}

#[test]
fn a_located_handler_names_its_function_and_a_java_one_none() {
    let source = "function save() {\n  doc.text = 1;\n}\n";
    let analysis = analyse(&[inline("save.js", source)]);
    let save = analysis.function_named("save").unwrap();
    let js = HandlerRef::Js {
        script: "http://127.0.0.1:8000/save.js".into(),
        line: 0,
        column: 0,
    };
    assert_eq!(analysis.handler_function(&js), Some(save));
    let java = HandlerRef::Java {
        class: "Save".into(),
        name: "save".into(),
        descriptor: "()V".into(),
    };
    assert_eq!(analysis.handler_function(&java), None);
}

#[test]
fn function_at_prefers_the_innermost_function() {
    let source = "var n = 0;\nfunction outer() {\n  el.addEventListener('click', function () { n++; });\n}\n";
    let analysis = analyse(&[inline("inner.js", source)]);
    let outer = analysis.function_named("outer").unwrap();
    let inner = analysis.handlers()[0].function.unwrap();
    assert_ne!(inner, outer);
    assert_eq!(analysis.function_at("inner.js", 2, 31), Some(inner));
    assert_eq!(analysis.function_at("inner.js", 2, 2), Some(outer));
    assert_eq!(analysis.functions()[inner].name, None);
    assert_eq!(analysis.functions()[inner].own.writes, set(&["n"]));
    // A handler literal is not a callee of the function registering it.
    assert!(analysis.read_write(outer).writes.is_empty());
}

#[test]
fn an_unparsable_script_is_reported_and_the_others_analysed() {
    let scripts = [
        inline("broken.js", "var ok = 1;\nfunction ( {\n"),
        load(data("listing1.js"), "listing1.js"),
    ];
    let analysis = JsAnalysis::analyse(&scripts, &JsConfig::default());
    assert_eq!(analysis.errors().len(), 1);
    let error = &analysis.errors()[0];
    assert_eq!(error.script, "broken.js");
    assert_eq!(error.line, 1);
    assert!(error.to_string().starts_with("broken.js:2:"), "{error}");
    assert!(analysis.function_named("e1").is_some());
    assert_eq!(analysis.handlers().len(), 4);
    assert!(
        analysis
            .functions()
            .iter()
            .all(|f| f.script == "listing1.js")
    );
}

#[test]
fn recursive_calls_terminate_and_share_their_fields() {
    let source = "
        var count = 0;
        var seen = [];
        function a(n) { count++; if (n > 0) b(n - 1); }
        function b(n) { seen.push(n); a(n); c(); }
        function c() { return total; }
        var total = 0;
    ";
    let analysis = analyse(&[inline("rec.js", source)]);
    let (a, b) = (rw(&analysis, "a"), rw(&analysis, "b"));
    assert_eq!(a, b);
    assert_eq!(a.writes, set(&["count", "seen"]));
    assert_eq!(a.reads, set(&["count", "seen", "total"]));
    assert_eq!(rw(&analysis, "c").reads, set(&["total"]));
}

#[test]
fn this_fields_are_named_after_their_class_or_object() {
    let source = "
        class Cart {
          constructor() { this.items = []; }
          add(item) { this.items.push(item); this.render(); }
          render() { byId('count').textContent = this.items.length; }
        }
        function Store(name) { this.name = name; }
        Store.prototype.save = function (data) { this.data = data; };
        var app = {
          open: function () { this.isOpen = true; },
          close() { this.isOpen = false; this.store.save(null); },
        };
        function loose() { this.flag = 1; }
    ";
    let analysis = analyse(&[inline("this.js", source)]);
    let add = rw(&analysis, "Cart.add");
    assert!(add.writes.contains("Cart.items"), "{:?}", add.writes);
    assert!(
        add.writes.contains("#count.textContent"),
        "{:?}",
        add.writes
    );
    assert_eq!(rw(&analysis, "Store.save").writes, set(&["Store.data"]));
    assert_eq!(rw(&analysis, "app.open").writes, set(&["app.isOpen"]));
    // `this.store.save()` with an unknown receiver reaches every application `save`.
    let close = rw(&analysis, "app.close");
    assert!(close.writes.contains("Store.data"), "{:?}", close.writes);
    assert_eq!(rw(&analysis, "loose").writes, set(&["this.flag"]));
    // Class methods start at their key.
    let add = &analysis.functions()[analysis.function_named("Cart.add").unwrap()];
    assert_eq!((add.line, add.column), (3, 10));
}

#[test]
fn registration_forms_are_recognised() {
    let source = "
        function save() {}
        function View() {
          var self = this;
          $('#list').on('click', '.row', function () { self.selected = 1; });
          $('#name').change(save);
          $('#go').click();
          $on(qs('.new-todo'), 'keyup', save);
          $delegate(self.$list, 'li label', 'dblclick', function () {});
          byId('menu').onclick = function () {};
          document.querySelector('#form').addEventListener('submit', this.onSubmit.bind(this));
          emitter.on('data', save);
          $live('#todo-list .destroy', 'click', function () {});
        }
        View.prototype.onSubmit = function () { this.sent = true; };
        window.$on = function (target, type, callback) {
          target.addEventListener(type, callback);
        };
    ";
    let analysis = analyse(&[inline("forms.js", source)]);
    let summary: Vec<String> = analysis
        .handlers()
        .iter()
        .map(|h| {
            let function = h.function.map(|f| {
                analysis.functions()[f]
                    .name
                    .clone()
                    .unwrap_or_else(|| "<anonymous>".into())
            });
            format!(
                "{} {} {} {:?} {:?}",
                h.via, h.event_type, h.target, h.selector, function
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            r##"jquery click $('#list') Some(".row") Some("<anonymous>")"##,
            r##"jquery change $('#name') Some("#name") Some("save")"##,
            r##"helper:$on keyup qs('.new-todo') Some(".new-todo") Some("save")"##,
            r##"helper:$delegate dblclick self.$list Some("li label") Some("<anonymous>")"##,
            r##"on-property click byId('menu') Some("#menu") Some("<anonymous>")"##,
            r##"addEventListener submit document.querySelector('#form') Some("#form") Some("View.onSubmit")"##,
            r##"helper:$live click '#todo-list .destroy' Some("#todo-list .destroy") Some("<anonymous>")"##,
        ]
    );
    // The inline jQuery handler sees `self` as the View.
    let row = analysis.handlers()[0].function.unwrap();
    assert_eq!(
        analysis.functions()[row].own.writes,
        set(&["View.selected"])
    );
    assert_eq!(rw(&analysis, "View.onSubmit").writes, set(&["View.sent"]));
}

#[test]
fn callbacks_run_for_their_creator_and_aliases_follow_paths() {
    let source = "
        var state = { items: [], total: 0 };
        function recount() {
          var items = state.items;
          var sum = 0;
          items.forEach(function (item) { sum += item.price; state.total = sum; });
          for (const item of state.items) { item.seen = true; }
          setTimeout(() => render(), 10);
          sum = 0;
          [1, 2].forEach(function (n) { sum += n; this.count = sum; }.bind(this));
        }
        function render() { byId('total').textContent = state.total; }
    ";
    let analysis = analyse(&[inline("alias.js", source)]);
    let recount = rw(&analysis, "recount");
    assert!(recount.reads.contains("state.items"), "{:?}", recount.reads);
    assert!(
        recount.writes.contains("state.total"),
        "{:?}",
        recount.writes
    );
    assert!(
        recount.writes.contains("state.items[].seen"),
        "{:?}",
        recount.writes
    );
    assert!(
        recount.writes.contains("#total.textContent"),
        "{:?}",
        recount.writes
    );
    assert!(!recount.reads.contains("sum") && !recount.reads.contains("item"));
    // A bound callback keeps both the creator's `this` (none here) and its locals.
    assert!(
        recount.writes.contains("this.count"),
        "{:?}",
        recount.writes
    );
    assert!(!recount.writes.contains("sum"), "{:?}", recount.writes);
}

#[test]
fn mutating_calls_write_their_receiver_unless_they_reach_the_application() {
    let source = "
        var app = { model: null };
        var log = [];
        function Model() {}
        Model.prototype.remove = function (id) { this.removed = id; };
        function onRemove() { app.model.remove(1); log.push('removed'); Math.max(1, 2); }
    ";
    let analysis = analyse(&[inline("mutate.js", source)]);
    let remove = rw(&analysis, "onRemove");
    assert_eq!(remove.writes, set(&["Model.removed", "log"]));
    assert_eq!(remove.reads, set(&["app.model", "log"]));
    let model = analysis.function_named("Model.remove").unwrap();
    let on_remove = analysis.function_named("onRemove").unwrap();
    assert_eq!(analysis.functions()[on_remove].calls, vec![model]);
    // Defining the method is not a write of `Model.remove`.
    assert!(
        analysis
            .functions()
            .iter()
            .all(|f| !f.own.writes.contains("Model.remove"))
    );
}

/// Every read and write is also kept with where it happens, so that a run's block coverage
/// can tell which of them it executed: the guard is read before the field is written.
#[test]
fn accesses_are_kept_with_their_positions() {
    let source = "var ui = { open: false };\nfunction close() {\n  if (!ui.open) return;\n  ui.open = false;\n}\n";
    let analysis = analyse(&[inline("a.js", source)]);
    let f = &analysis.functions()[analysis.function_named("close").unwrap()];
    let at = |needle: &str| source.find(needle).unwrap() as u32;
    let seen: Vec<(u32, &str, bool)> = f
        .accesses
        .iter()
        .map(|a| (a.offset, a.path.as_str(), a.write))
        .collect();
    assert!(
        seen.contains(&(at("ui.open)"), "ui.open", false)),
        "{seen:?}"
    );
    assert!(
        seen.contains(&(at("ui.open = false"), "ui.open", true)),
        "{seen:?}"
    );
    let first_write = seen.iter().position(|a| a.2).unwrap();
    assert!(
        seen[..first_write].iter().any(|a| a.1 == "ui.open"),
        "{seen:?}"
    );
}

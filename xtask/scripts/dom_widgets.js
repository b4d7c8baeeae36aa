// Page-side walker of `cargo xtask vision-data`: lists the widgets a person would see on
// the current screen, with their visual boxes. Evaluated as one expression; returns
// { viewport: {width, height}, widgets: [{x, y, w, h, kind, element, text}] } with boxes in
// CSS pixels relative to the visual viewport (the part of the page the screenshot shows).
//
// The labelling rules (also in crates/gui-vision/tests/data/screens/README.md):
// * Only what is painted and visible: non-zero size, `visibility: visible`, opacity > 0,
//   at least half inside the viewport and the clipping ancestors, and not covered (the
//   topmost element at the box centre is the element, inside it, or one of its ancestors).
// * Kinds: see `intrinsicKind`. Controls, images and bordered buttons are atomic: their
//   inside is not walked. List rows are emitted and walked. Other elements with a visible
//   boundary are containers (not emitted) unless they hold nothing but one block of text,
//   in which case they are one TextView with their border box (a badge, a chip).
// * Boxes: the border box for controls and for anything with a visible boundary (a
//   background different from the one behind it, a border, a box shadow); the tight union
//   of the line boxes for text (one TextView per run of inline text in a block); the
//   element box for images.
// * Shadow roots (open) and same-origin iframes are walked too.
(() => {
  'use strict';
  const MIN_SIZE = 4;
  const ICON_MAX = 32;
  const out = [];

  // ---- geometry -------------------------------------------------------------------
  const vv = window.visualViewport;
  const view = vv
    ? { x: vv.offsetLeft, y: vv.offsetTop, w: vv.width, h: vv.height }
    : { x: 0, y: 0, w: innerWidth, h: innerHeight };
  const viewRect = { x: view.x, y: view.y, w: view.w, h: view.h };

  function rectOf(r, off) {
    return { x: r.left + off.x, y: r.top + off.y, w: r.width, h: r.height };
  }
  function intersect(a, b) {
    const x = Math.max(a.x, b.x);
    const y = Math.max(a.y, b.y);
    const r = Math.min(a.x + a.w, b.x + b.w);
    const bt = Math.min(a.y + a.h, b.y + b.h);
    return r > x && bt > y ? { x, y, w: r - x, h: bt - y } : null;
  }
  function union(a, b) {
    if (!a) return b;
    if (!b) return a;
    const x = Math.min(a.x, b.x);
    const y = Math.min(a.y, b.y);
    return {
      x, y,
      w: Math.max(a.x + a.w, b.x + b.w) - x,
      h: Math.max(a.y + a.h, b.y + b.h) - y,
    };
  }
  // The part of `r` that can be seen through `clip`; null when less than half of it.
  function visiblePart(r, clip) {
    if (r.w <= 0 || r.h <= 0) return null;
    const v = intersect(r, clip);
    if (!v || v.w * v.h < 0.5 * r.w * r.h) return null;
    return v;
  }

  // ---- colours and boundaries -----------------------------------------------------
  function parseColor(c) {
    const m = /rgba?\(([^)]+)\)/.exec(c || '');
    if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(parseFloat);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  }
  function opaque(c) {
    return c && c.a > 0.05;
  }
  function sameColor(a, b) {
    return a && b && Math.abs(a.r - b.r) + Math.abs(a.g - b.g) + Math.abs(a.b - b.b) < 12;
  }
  function borderSides(st, behind) {
    let n = 0;
    for (const s of ['Top', 'Right', 'Bottom', 'Left']) {
      const w = parseFloat(st['border' + s + 'Width']);
      const style = st['border' + s + 'Style'];
      const col = parseColor(st['border' + s + 'Color']);
      if (w >= 1 && style !== 'none' && style !== 'hidden' && opaque(col) && !sameColor(col, behind)) n++;
    }
    return n;
  }
  // A boundary a person (and an edge detector) can see around the element. `sides` is how
  // many bordered sides suffice: 1 for list rows (a rule under each row), 3 otherwise.
  function hasBoundary(st, behind, sides) {
    const bg = parseColor(st.backgroundColor);
    if (opaque(bg) && !sameColor(bg, behind)) return true;
    if (st.backgroundImage && st.backgroundImage.includes('gradient')) return true;
    if (st.boxShadow && st.boxShadow !== 'none') return true;
    return borderSides(st, behind) >= sides;
  }
  function backgroundBehindChildren(st, behind) {
    const bg = parseColor(st.backgroundColor);
    return bg && bg.a > 0.5 ? bg : behind;
  }

  // ---- element description --------------------------------------------------------
  function describe(el) {
    let s = el.localName;
    if (s === 'input') s += '[type=' + (el.getAttribute('type') || 'text').toLowerCase() + ']';
    const role = el.getAttribute('role');
    if (role) s += '[role=' + role + ']';
    if (el.id) s += '#' + el.id;
    else if (typeof el.className === 'string' && el.className.trim())
      s += '.' + el.className.trim().split(/\s+/)[0];
    return s;
  }
  function clean(t) {
    t = (t || '').replace(/\s+/g, ' ').trim();
    return t.length > 80 ? t.slice(0, 80) : t;
  }
  function ownText(el) {
    if (el.localName === 'input') {
      const t = (el.type || '').toLowerCase();
      if (['submit', 'button', 'reset'].includes(t)) return clean(el.value);
      if (t === 'password') return el.value ? '' : clean(el.placeholder);
      if (['checkbox', 'radio', 'hidden', 'file', 'color'].includes(t)) return '';
      return clean(el.value || el.placeholder);
    }
    if (el.localName === 'textarea') return clean(el.value || el.placeholder);
    if (el.localName === 'select') {
      const o = el.options[el.selectedIndex];
      return clean(o ? o.text : '');
    }
    if (el.localName === 'img') return clean(el.alt);
    return clean(el.innerText || el.textContent || el.getAttribute('aria-label') || '');
  }

  // ---- kinds ----------------------------------------------------------------------
  const TEXT_INPUTS = new Set(['text', 'email', 'password', 'search', 'url', 'tel', 'number',
    'date', 'datetime-local', 'month', 'week', 'time', '']);
  const IMAGE_TAGS = new Set(['img', 'canvas', 'video', 'svg', 'picture', 'object', 'embed']);

  function isSwitchLike(el, st) {
    const r = el.getBoundingClientRect();
    const cls = (typeof el.className === 'string' ? el.className : '') + ' ' + el.id;
    return /switch/i.test(cls) ||
      (st.appearance === 'none' && r.width >= 1.5 * r.height && r.height >= 10);
  }
  // Text a person can read in the element (not only whitespace).
  function hasText(el) {
    return (el.innerText || el.textContent || '').trim().length > 0;
  }
  // Whether the element shows nothing but pictures (img/svg/canvas, or background images).
  function onlyPictures(el, st) {
    if (hasText(el)) return false;
    if (st.backgroundImage && st.backgroundImage.includes('url(')) return true;
    for (const d of el.querySelectorAll('*')) {
      if (IMAGE_TAGS.has(d.localName)) return true;
      const ds = getComputedStyle(d);
      if (ds.backgroundImage && ds.backgroundImage.includes('url(')) return true;
    }
    return false;
  }
  function iconGlyph(el) {
    if (el.children.length) return false;
    const t = (el.textContent || '').trim();
    if (!t || [...t].length > 2) return false;
    const cp = t.codePointAt(0);
    if (cp >= 0xe000 && cp <= 0xf8ff) return true;
    const fam = getComputedStyle(el).fontFamily.toLowerCase();
    return /icon|awesome|material|glyph|symbol/.test(fam);
  }

  // The kind an element has by itself, or null for text and layout. `atomic` widgets hide
  // their inside (a button's label is part of the button).
  function intrinsicKind(el, st, behind) {
    const tag = el.localName;
    const role = (el.getAttribute('role') || '').toLowerCase();
    const r = el.getBoundingClientRect();
    const small = r.width <= ICON_MAX && r.height <= ICON_MAX;
    if (tag === 'input') {
      const t = (el.getAttribute('type') || 'text').toLowerCase();
      if (t === 'hidden') return null;
      if (t === 'checkbox') return role === 'switch' || isSwitchLike(el, st) ? 'switch' : 'check_box';
      if (t === 'radio') return 'radio_button';
      if (t === 'range') return 'seek_bar';
      if (t === 'image') return 'image_button';
      if (['submit', 'button', 'reset', 'file', 'color'].includes(t)) return 'button';
      if (TEXT_INPUTS.has(t)) return 'edit_text';
      return 'edit_text';
    }
    if (tag === 'textarea') return 'edit_text';
    if (tag === 'select') return 'spinner';
    if (tag === 'progress' || tag === 'meter') return 'progress_bar';
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable))
      return 'edit_text';
    switch (role) {
      case 'switch': return 'switch';
      case 'checkbox': return 'check_box';
      case 'radio': return 'radio_button';
      case 'slider': return 'seek_bar';
      case 'progressbar': return 'progress_bar';
      case 'combobox': case 'listbox': return 'spinner';
      case 'tab': return 'tab';
      case 'textbox': case 'searchbox': return 'edit_text';
      case 'img': return small ? 'icon' : 'image_view';
      default: break;
    }
    if (role === 'menuitem' || role === 'menuitemcheckbox' || role === 'menuitemradio') return 'list_item';
    if (tag === 'button' || role === 'button' ||
        (tag === 'a' && el.hasAttribute('href') && hasBoundary(st, behind, 3))) {
      return onlyPictures(el, st) ? 'image_button' : 'button';
    }
    if (tag === 'a' && onlyPictures(el, st) && el.querySelector('img,svg')) return 'image_button';
    if (IMAGE_TAGS.has(tag)) return small ? 'icon' : 'image_view';
    if (tag === 'li' || tag === 'tr' || role === 'listitem' || role === 'option' || role === 'row') {
      if (!ruledRow(el, st, behind) && !ruledSibling(el, behind)) return null;
      // A bordered tile showing only a small picture (an icon palette) is clicked like an
      // image button, not read like a row.
      return onlyPictures(el, st) && r.width <= 2 * ICON_MAX && r.height <= 2 * ICON_MAX
        ? 'image_button' : 'list_item';
    }
    // A slider built from divs without ARIA (a `*-slider` class with a drawn track).
    const tokens = typeof el.className === 'string' ? el.className.split(/\s+/) : [];
    if (tokens.some((t) => t === 'slider' || /-slider$/.test(t)) && hasBoundary(st, behind, 3) &&
        r.width > 2 * r.height) {
      return 'seek_bar';
    }
    if (!el.children.length && !hasText(el) && st.backgroundImage.includes('url(')) {
      return small ? 'icon' : 'image_view';
    }
    if (iconGlyph(el) && small) return 'icon';
    return null;
  }
  function ruledRow(el, st, behind) {
    return hasBoundary(st, behind, 1) || (el.localName === 'tr' && rowCellsRuled(el, behind));
  }
  // Rows of one list look alike: the last row often drops the rule under it.
  function ruledSibling(el, behind) {
    const p = el.parentElement;
    if (!p) return false;
    let n = 0;
    for (const sib of p.children) {
      if (sib === el || sib.localName !== el.localName || n++ > 3) continue;
      const ss = getComputedStyle(sib);
      if (ss.display !== 'none' && ruledRow(sib, ss, behind)) return true;
    }
    return false;
  }
  function rowCellsRuled(tr, behind) {
    const c = tr.cells && tr.cells[0];
    if (!c) return false;
    const st = getComputedStyle(c);
    return borderSides(st, behind) >= 1 && (parseFloat(st.borderBottomWidth) >= 1 ||
      parseFloat(st.borderTopWidth) >= 1);
  }
  const ATOMIC = new Set(['button', 'image_button', 'edit_text', 'check_box', 'radio_button',
    'switch', 'seek_bar', 'progress_bar', 'spinner', 'tab', 'image_view', 'icon']);

  // A code editor (ace, CodeMirror) draws its text in divs and takes keys through a
  // hidden textarea: a person calls the whole bordered area a text field.
  function isCodeEditor(el) {
    const ta = el.querySelector(':scope > textarea, :scope > div > textarea');
    if (!ta) return false;
    const r = ta.getBoundingClientRect();
    const st = getComputedStyle(ta);
    return parseFloat(st.opacity) === 0 || r.width < 4 || r.height < 4;
  }

  // The kind of a label's checkbox or radio when that input is not drawn by itself.
  function drawnControlKind(label) {
    const c = label.control;
    if (!c || c.localName !== 'input' || !['checkbox', 'radio'].includes(c.type)) return null;
    const st = getComputedStyle(c);
    const r = c.getBoundingClientRect();
    const hidden = st.display === 'none' || parseFloat(st.opacity) === 0 ||
      st.visibility !== 'visible' || r.width < 4 || r.height < 4 ||
      (st.clip && st.clip !== 'auto') || st.clipPath !== 'none';
    if (!hidden) return null;
    if (c.type === 'radio') return 'radio_button';
    return c.getAttribute('role') === 'switch' ? 'switch' : 'check_box';
  }

  // ---- visibility -----------------------------------------------------------------
  function composedParent(n) {
    return n.parentNode instanceof ShadowRoot ? n.parentNode.host : n.parentElement;
  }
  function composedContains(a, b) {
    for (let n = b; n; n = composedParent(n)) if (n === a) return true;
    return false;
  }
  const REPLACED = new Set(['img', 'canvas', 'video', 'svg', 'iframe', 'input', 'select',
    'textarea', 'button', 'object', 'embed', 'progress', 'meter']);
  // Whether an element paints over what lies under its inside (a fill, a picture, a
  // control); a transparent wrapper laid over other content does not hide it.
  function paints(el) {
    if (REPLACED.has(el.localName)) return true;
    const st = getComputedStyle(el);
    if (parseFloat(st.opacity) < 0.05 || st.visibility !== 'visible') return false;
    const bg = parseColor(st.backgroundColor);
    return (bg && bg.a > 0.3) || st.backgroundImage !== 'none';
  }
  // What is seen at a point (CSS px of the element's own frame) belongs to `el`: going
  // down the stack of elements there, `el`, something inside it or one of its ancestors
  // (an ancestor cannot paint over its descendant) comes before anything that paints.
  function shownAt(el, x, y) {
    const root = el.getRootNode();
    const src = root.elementsFromPoint ? root : el.ownerDocument;
    for (const hit of src.elementsFromPoint(x, y)) {
      if (composedContains(el, hit) || composedContains(hit, el)) return true;
      if (paints(hit)) return false;
    }
    return false;
  }
  // `box` is in top-frame coordinates; `off` maps the element's frame into it.
  function uncovered(el, box, off) {
    const cx = box.x + box.w / 2 - off.x;
    const cy = box.y + box.h / 2 - off.y;
    if (shownAt(el, cx, cy)) return true;
    // A centre under a small overlapping thing (a badge) still leaves most of it visible.
    let hits = 0;
    for (const [fx, fy] of [[0.2, 0.2], [0.8, 0.2], [0.2, 0.8], [0.8, 0.8]]) {
      if (shownAt(el, box.x + fx * box.w - off.x, box.y + fy * box.h - off.y)) hits++;
    }
    return hits >= 3;
  }

  function emit(box, kind, el, text, frame) {
    if (box.w < MIN_SIZE || box.h < MIN_SIZE) return;
    out.push({
      x: box.x - view.x, y: box.y - view.y, w: box.w, h: box.h,
      kind, element: frame.prefix + describe(el), text: clean(text),
    });
  }

  // ---- text runs ------------------------------------------------------------------
  // Line boxes of one text node, in top-frame coordinates, that are visible.
  function textRects(node, frame, clip) {
    const range = node.ownerDocument.createRange();
    range.selectNodeContents(node);
    const rects = [];
    for (const r of range.getClientRects()) {
      const b = rectOf(r, frame.off);
      const v = visiblePart(b, clip);
      if (v && v.w >= 1 && v.h >= 1) rects.push(v);
    }
    return rects;
  }
  // A run: consecutive text nodes and plain inline elements of one block.
  function flushRun(run, block, frame) {
    if (!run.rects.length || !run.text.trim() || run.noText) return;
    // Keep the lines whose centre shows this text (not something drawn over it).
    let box = null;
    for (const r of run.rects) {
      const owner = run.owners[run.rects.indexOf(r)];
      if (shownAt(owner, r.x + r.w / 2 - frame.off.x, r.y + r.h / 2 - frame.off.y)) box = union(box, r);
    }
    if (box) emit(box, 'text_view', block, run.text, frame);
  }
  function textVisible(el) {
    const st = getComputedStyle(el);
    const col = parseColor(st.color);
    return st.visibility === 'visible' && (!col || col.a > 0.05);
  }
  function addText(run, node, frame, clip) {
    const parent = node.parentElement;
    if (!parent || !textVisible(parent) || !node.data.trim()) return;
    const rects = textRects(node, frame, clip);
    if (!rects.length) return;
    run.owners = run.owners || [];
    for (const r of rects) {
      run.rects.push(r);
      run.owners.push(parent);
    }
    run.text += node.data;
  }

  function isInline(st) {
    return st.display === 'inline' || st.display === 'contents';
  }

  // ---- the walk -------------------------------------------------------------------
  // `ctx`: { frame: {off, prefix}, clip and absClip (top-frame rects that clip children in
  // flow and absolutely positioned ones), behind (the colour behind children) }.
  function childNodesOf(el) {
    if (el.shadowRoot) return [...el.shadowRoot.childNodes];
    if (el.localName === 'slot') return el.assignedNodes({ flatten: true });
    return [...el.childNodes];
  }

  function visitChildren(el, ctx, st) {
    const newRun = () => ({ rects: [], text: '', noText: !!ctx.noText });
    let run = newRun();
    const nodes = childNodesOf(el);
    for (const n of nodes) {
      if (n.nodeType === Node.TEXT_NODE) {
        addText(run, n, ctx.frame, ctx.clip);
        continue;
      }
      if (n.nodeType !== Node.ELEMENT_NODE) continue;
      const cst = getComputedStyle(n);
      if (cst.display === 'none') continue;
      // Plain inline elements (b, a, span without a boundary) continue the run.
      if (isInline(cst) && n.localName !== 'li' && !intrinsicKind(n, cst, ctx.behind) &&
          !hasBoundary(cst, ctx.behind, 3) && !n.shadowRoot &&
          !n.querySelector('input,button,select,textarea,img,svg,canvas,video,iframe,[role]')) {
        if (parseFloat(cst.opacity) === 0) continue;
        collectInline(run, n, ctx);
        continue;
      }
      flushRun(run, el, ctx.frame);
      run = newRun();
      visit(n, ctx, cst);
    }
    flushRun(run, el, ctx.frame);
  }
  function collectInline(run, el, ctx) {
    for (const n of el.childNodes) {
      if (n.nodeType === Node.TEXT_NODE) addText(run, n, ctx.frame, ctx.clip);
      else if (n.nodeType === Node.ELEMENT_NODE && getComputedStyle(n).display !== 'none')
        collectInline(run, n, ctx);
    }
  }

  // Only one block of inline text inside (no controls, pictures or blocks).
  function onlyInlineText(el) {
    if (!hasText(el)) return false;
    for (const d of el.querySelectorAll('*')) {
      const ds = getComputedStyle(d);
      if (ds.display === 'none') continue;
      if (!isInline(ds)) return false;
      if (d.matches('input,button,select,textarea,img,svg,canvas,video,iframe')) return false;
    }
    return !el.shadowRoot;
  }

  function visit(el, ctx, st) {
    st = st || getComputedStyle(el);
    if (st.display === 'none') return;
    if (parseFloat(st.opacity) === 0) return;
    const tag = el.localName;
    if (tag === 'script' || tag === 'style' || tag === 'template' || tag === 'head' ||
        tag === 'noscript' || tag === 'option' || tag === 'datalist') return;
    const frame = ctx.frame;
    const box = rectOf(el.getBoundingClientRect(), frame.off);
    const visible = st.visibility === 'visible';

    // What clips this element: an absolutely positioned one escapes the overflow clip of
    // ancestors below its containing block, a fixed one everything but the viewport.
    const ownClip = st.position === 'fixed' ? viewRect
      : st.position === 'absolute' ? ctx.absClip : ctx.clip;
    // Children are clipped by this element when it hides its overflow (the root's and the
    // body's overflow apply to the viewport instead).
    let clip = ownClip;
    if ((st.overflowX !== 'visible' || st.overflowY !== 'visible') && tag !== 'html' && tag !== 'body') {
      clip = intersect(clip, box) || { x: box.x, y: box.y, w: 0, h: 0 };
    }
    const positioned = st.position !== 'static' || st.transform !== 'none';
    const behind = ctx.behind;
    const childCtx = {
      frame, clip, absClip: positioned ? clip : ctx.absClip,
      behind: backgroundBehindChildren(st, behind),
      noText: ctx.noText, drawnControl: ctx.drawnControl,
    };

    if (tag === 'iframe') {
      let doc = null;
      try { doc = el.contentDocument; } catch (e) { doc = null; }
      const part = visiblePart(box, ownClip);
      if (!doc || !doc.documentElement || !part || !visible || !uncovered(el, part, frame.off)) return;
      const cs = el.getBoundingClientRect();
      const off = {
        x: frame.off.x + cs.left + el.clientLeft + parseFloat(st.paddingLeft),
        y: frame.off.y + cs.top + el.clientTop + parseFloat(st.paddingTop),
      };
      const inner = {
        frame: { off, prefix: frame.prefix + describe(el) + ' >> ' },
        clip: intersect(part, ownClip) || part,
        absClip: intersect(part, ownClip) || part,
        behind: parseColor('rgb(255,255,255)'),
      };
      visitChildren(doc.documentElement, inner, getComputedStyle(doc.documentElement));
      return;
    }

    let kind = visible ? intrinsicKind(el, st, behind) : null;
    const boundary = tag !== 'html' && tag !== 'body' && hasBoundary(st, behind, 3);
    if (!kind && visible && boundary && isCodeEditor(el)) {
      // The editor is one text field; its code lines are not separate texts, but the
      // controls it opens (a search box) are widgets.
      const part = visiblePart(box, ownClip);
      if (part && uncovered(el, part, frame.off)) emit(part, 'edit_text', el, '', frame);
      visitChildren(el, { ...childCtx, noText: true }, st);
      return;
    }
    // A label whose checkbox or radio is hidden draws the control itself: as a bordered
    // toggle button (the label is the control) or as a small picture inside it.
    const drawn = visible && tag === 'label' ? drawnControlKind(el) : null;
    if (drawn && !kind) {
      if (boundary) kind = drawn;
      else childCtx.drawnControl = { kind: drawn };
    }
    if (kind) {
      const part = visiblePart(box, ownClip);
      const ok = part && uncovered(el, part, frame.off);
      if (kind === 'icon' && ctx.drawnControl && !ctx.drawnControl.used) {
        kind = ctx.drawnControl.kind;
        ctx.drawnControl.used = true;
      }
      if (ok) emit(part, kind, el, ownText(el), frame);
      if (ATOMIC.has(kind)) return;
      if (kind === 'list_item' && ok && onlyInlineText(el)) return;
      if (tag !== 'svg') visitChildren(el, childCtx, st);
      return;
    }
    // A bordered or filled element holding one block of text: a badge, a note box, a
    // plain link styled as a chip. Larger boxes holding blocks are layout containers.
    if (visible && boundary && onlyInlineText(el)) {
      const part = visiblePart(box, ownClip);
      if (part && uncovered(el, part, frame.off)) {
        // One that takes clicks (a pointer cursor) is a button drawn without <button>.
        const clickable = st.cursor === 'pointer';
        emit(part, clickable ? 'button' : 'text_view', el, ownText(el), frame);
        return;
      }
    }
    // A filled or bordered box with nothing inside (a picture placeholder, a colour
    // swatch) is still a thing on screen; thin rules and empty wrappers are not.
    if (visible && boundary && !el.children.length && !hasText(el) && tag !== 'hr' && !ctx.noText &&
        box.w >= 16 && box.h >= 16 && !el.shadowRoot) {
      const part = visiblePart(box, ownClip);
      if (part && uncovered(el, part, frame.off)) {
        emit(part, part.w <= ICON_MAX && part.h <= ICON_MAX ? 'icon' : 'image_view', el, '', frame);
      }
      return;
    }
    if (tag === 'svg') return;
    visitChildren(el, childCtx, st);
  }

  const rootStyle = getComputedStyle(document.documentElement);
  const bodyStyle = document.body ? getComputedStyle(document.body) : rootStyle;
  let pageBg = parseColor(bodyStyle.backgroundColor);
  if (!opaque(pageBg)) pageBg = parseColor(rootStyle.backgroundColor);
  if (!opaque(pageBg)) pageBg = parseColor('rgb(255,255,255)');
  visit(document.documentElement, {
    frame: { off: { x: 0, y: 0 }, prefix: '' },
    clip: viewRect,
    absClip: viewRect,
    behind: pageBg,
  }, rootStyle);

  // One label per box and kind (nested wrappers can give the same box twice).
  const seen = new Set();
  const widgets = out.filter((w) => {
    const k = [Math.round(w.x), Math.round(w.y), Math.round(w.w), Math.round(w.h), w.kind].join();
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  return { viewport: { width: view.w, height: view.h }, widgets };
})()

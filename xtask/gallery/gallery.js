// Widget gallery: training screens for the widget detector and the 14-kind classifier.
//
// `index.html?theme=NAME&seed=N` draws a page of cards holding widgets of every kind
// (buttons, icon buttons, text fields, check boxes, radio buttons, switches, sliders,
// progress bars, drop-downs, list rows, tabs, icons, pictures, text) in the markup and
// stylesheet of one CSS framework from npm, or, for `plain`, in a stylesheet whose colours,
// corners, borders and fonts are drawn from the seed. Nothing here labels anything: the
// DOM walker of `cargo xtask vision-data` labels these pages by the same rules as every
// other app, so the gallery only widens what the training apps look like.
//
// Frameworks are served from `fw/<name>/` (npm packages the xtask fetches and links in);
// icons are bootstrap-icons SVGs; pictures are painted on a canvas. Everything random comes
// from one seeded generator, so the same URL draws the same page. `window.galleryReady`
// resolves once the page is complete.
(() => {
  'use strict';
  const params = new URLSearchParams(location.search);
  const themeName = params.get('theme') || 'plain';
  let state = (Number(params.get('seed')) || 1) >>> 0;

  // ---- seeded randomness (mulberry32) ---------------------------------------------
  function rnd() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  const int = (a, b) => a + Math.floor(rnd() * (b - a + 1));
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const chance = (p) => rnd() < p;
  let uid = 0;
  const nextId = () => 'g' + ++uid;

  const WORDS = ('account add alert archive back basket billing book calendar cancel cart change ' +
    'chat check close comment confirm contact copy create delete details done download draft ' +
    'edit email export favourite filter find follow forward help history home import inbox ' +
    'invite label like list load login logout mail menu message more move music new next note ' +
    'notify open order page password pay photo play post preview print profile publish refresh ' +
    'remove reply report reset save search send settings share show sign start stop submit ' +
    'sync tag task team today undo update upload user view week').split(' ');
  const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
  const words = (a, b) => cap(Array.from({ length: int(a, b) }, () => pick(WORDS)).join(' '));
  const sentence = () => words(6, 16) + '.';

  // ---- DOM helpers ----------------------------------------------------------------
  // el('button', {class: 'btn', text: 'Save'}, [children]); other keys become attributes.
  function el(tag, attrs, children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'style') e.style.cssText = v;
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children || []) e.append(c);
    return e;
  }
  const cls = (...names) => names.filter(Boolean).join(' ');

  // ---- icons and pictures ---------------------------------------------------------
  let iconSources = [];
  async function loadIcons() {
    const names = Object.keys(await (await fetch('fw/bootstrap-icons/font/bootstrap-icons.json')).json());
    const chosen = Array.from({ length: 48 }, () => pick(names));
    iconSources = (await Promise.all(chosen.map((n) =>
      fetch(`fw/bootstrap-icons/icons/${n}.svg`).then((r) => (r.ok ? r.text() : null))))).filter(Boolean);
  }
  function icon(size) {
    const t = document.createElement('template');
    t.innerHTML = pick(iconSources).trim();
    const svg = t.content.firstElementChild;
    const s = size || pick([14, 16, 16, 18, 20, 24]);
    svg.setAttribute('width', s);
    svg.setAttribute('height', s);
    return svg;
  }
  function hsl(h, s, l) {
    return `hsl(${Math.round(h)} ${Math.round(s)}% ${Math.round(l)}%)`;
  }
  function pictureUrl(w, h) {
    const c = document.createElement('canvas');
    c.width = w;
    c.height = h;
    const g = c.getContext('2d');
    const hue = rnd() * 360;
    const grad = g.createLinearGradient(0, 0, w * rnd(), h);
    grad.addColorStop(0, hsl(hue, 60, 40 + 30 * rnd()));
    grad.addColorStop(1, hsl(hue + 60 * rnd(), 50, 20 + 60 * rnd()));
    g.fillStyle = grad;
    g.fillRect(0, 0, w, h);
    for (let i = int(3, 12); i > 0; i--) {
      g.fillStyle = hsl(rnd() * 360, 70 * rnd(), 30 + 60 * rnd());
      g.globalAlpha = 0.4 + 0.6 * rnd();
      const x = rnd() * w;
      const y = rnd() * h;
      const r = (0.05 + 0.3 * rnd()) * Math.min(w, h);
      g.beginPath();
      if (chance(0.5)) g.arc(x, y, r, 0, 2 * Math.PI);
      else {
        // A hill or a roof: what photos of places and things are made of, roughly.
        g.moveTo(x - 2 * r, h);
        g.lineTo(x, y);
        g.lineTo(x + 2 * r, h);
      }
      g.fill();
    }
    return c.toDataURL('image/png');
  }
  function picture(w, h, style) {
    return el('img', { src: pictureUrl(w, h), alt: words(1, 3), width: w, height: h, style });
  }

  // ---- the plain theme: a stylesheet drawn from the seed ---------------------------
  function plainStyles() {
    const dark = chance(0.25);
    const hue = rnd() * 360;
    const accent = hsl(hue, 50 + 40 * rnd(), dark ? 60 : 35 + 20 * rnd());
    const bg = dark ? hsl(hue, 10 * rnd(), 8 + 10 * rnd()) : hsl(hue, 20 * rnd(), 94 + 6 * rnd());
    const card = dark ? hsl(hue, 10 * rnd(), 16 + 8 * rnd()) : pick(['#fff', hsl(hue, 15, 98)]);
    const fg = dark ? '#e8e8e8' : pick(['#222', '#333', '#111', hsl(hue, 20, 20)]);
    const line = dark ? hsl(hue, 10, 35) : hsl(hue, 10 * rnd(), 70 + 15 * rnd());
    const radius = pick([0, 2, 3, 4, 6, 8, 12]);
    const pill = chance(0.2) ? 999 : radius;
    const bw = pick([1, 1, 1, 2]);
    const font = pick(['system-ui, sans-serif', 'Georgia, serif', 'Verdana, sans-serif',
      '"Trebuchet MS", sans-serif', 'Tahoma, sans-serif', '"Courier New", monospace',
      'Arial, Helvetica, sans-serif', '"DejaVu Sans", sans-serif']);
    const size = int(13, 17);
    const shadow = chance(0.4) ? `0 ${int(1, 3)}px ${int(2, 8)}px rgba(0,0,0,${(0.1 + 0.2 * rnd()).toFixed(2)})` : 'none';
    const cb = int(14, 22);
    const rb = int(13, 20);
    const upper = chance(0.25) ? 'uppercase' : 'none';
    const check = encodeURIComponent(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M3 8l3 3 7-7" stroke="${dark ? '#000' : '#fff'}" stroke-width="2.2" fill="none"/></svg>`);
    return `
      body { background: ${bg}; color: ${fg}; font: ${size}px/1.45 ${font}; margin: 0; }
      .p-card { background: ${card}; border: ${chance(0.6) ? `1px solid ${line}` : 'none'}; border-radius: ${radius * 1.5}px; box-shadow: ${shadow}; padding: ${int(10, 20)}px; }
      .p-bar { background: ${chance(0.5) ? accent : card}; color: ${chance(0.5) ? '#fff' : fg}; }
      .p-btn { font: inherit; text-transform: ${upper}; padding: ${int(4, 10)}px ${int(10, 20)}px; border-radius: ${pill}px; cursor: pointer; }
      .p-btn.fill { background: ${accent}; color: #fff; border: ${bw}px solid ${accent}; }
      .p-btn.ghost { background: transparent; color: ${accent}; border: ${bw}px solid ${accent}; }
      .p-btn.soft { background: ${hsl(hue, 40, dark ? 30 : 88)}; color: ${fg}; border: 0; }
      .p-btn.grey { background: ${dark ? '#444' : '#e4e4e4'}; color: ${fg}; border: ${bw}px solid ${line}; }
      .p-link { color: ${accent}; text-decoration: ${chance(0.5) ? 'underline' : 'none'}; }
      a.p-btn { display: inline-block; text-decoration: none; }
      .p-ibtn { display: inline-flex; align-items: center; justify-content: center; width: ${int(26, 40)}px; height: ${int(26, 40)}px; padding: 0; border-radius: ${chance(0.4) ? '50%' : radius + 'px'}; color: ${fg}; background: ${chance(0.5) ? 'transparent' : card}; border: ${bw}px solid ${line}; }
      .p-tile { list-style: none; display: inline-flex; width: ${int(20, 30)}px; height: ${int(20, 30)}px; align-items: center; justify-content: center; margin: 2px; border: 1px solid ${line}; border-radius: ${Math.min(radius, 4)}px; background: ${hsl(hue, 10, dark ? 25 : 95)}; }
      .p-field { font: inherit; color: ${fg}; background: ${dark ? '#222' : '#fff'}; padding: ${int(4, 9)}px ${int(6, 10)}px; border-radius: ${radius}px; }
      .p-field.box { border: ${bw}px solid ${line}; }
      .p-field.under { border: 0; border-bottom: 2px solid ${line}; border-radius: 0; background: transparent; }
      .p-field.filled { border: 0; background: ${hsl(hue, 10, dark ? 25 : 92)}; }
      .p-cb { appearance: none; width: ${cb}px; height: ${cb}px; padding: 0; margin: 0 6px 0 0; border: 2px solid ${line}; border-radius: ${chance(0.3) ? '50%' : Math.min(radius, 4) + 'px'}; vertical-align: middle; background: ${card}; }
      .p-cb:checked { background: ${accent} url("data:image/svg+xml,${check}") center / 80% no-repeat; border-color: ${accent}; }
      .p-rb { accent-color: ${accent}; width: ${rb}px; height: ${rb}px; }
      .p-sw { appearance: none; position: relative; width: ${int(36, 48)}px; height: ${int(18, 24)}px; margin: 0 8px 0 0; border-radius: 999px; background: ${dark ? '#555' : '#ccc'}; vertical-align: middle; }
      .p-sw::before { content: ''; position: absolute; top: 2px; left: 2px; bottom: 2px; aspect-ratio: 1; border-radius: 50%; background: #fff; }
      .p-sw:checked { background: ${accent}; }
      .p-sw:checked::before { left: auto; right: 2px; }
      .p-range { accent-color: ${accent}; width: ${int(50, 90)}%; }
      .p-progress { height: ${int(4, 14)}px; background: ${hsl(hue, 10, dark ? 30 : 88)}; border-radius: ${pill > 100 ? 999 : radius}px; overflow: hidden; }
      .p-progress > div { height: 100%; background: ${accent}; }
      .p-tabs { display: flex; gap: ${int(0, 8)}px; border-bottom: 1px solid ${line}; padding: 0; margin: 0; }
      .p-tab { padding: 6px 14px; color: ${fg}; text-decoration: none; }
      .p-tab.on { border-bottom: 3px solid ${accent}; color: ${accent}; }
      .p-tab.boxed.on { border: 1px solid ${line}; border-bottom-color: ${card}; border-radius: ${radius}px ${radius}px 0 0; }
      .p-list { list-style: none; padding: 0; margin: 0; border: 1px solid ${line}; border-radius: ${radius}px; }
      .p-list > li { padding: ${int(6, 12)}px 12px; border-bottom: 1px solid ${line}; }
      .p-list > li:last-child { border-bottom: 0; }
      .p-badge { display: inline-block; padding: 1px 8px; border-radius: ${pill}px; background: ${accent}; color: #fff; font-size: 0.8em; }
      select.p-field { padding-right: 24px; }
    `;
  }

  // ---- themes: how each framework writes each widget --------------------------------
  // Every builder returns one element (or a fragment of siblings). Builders a framework
  // does not have fall back to the plain theme's, drawn in that framework's page.
  const plain = {
    css: [],
    card: (title, body) => el('div', { class: 'p-card' }, [el('h3', { text: title, style: 'margin:0 0 10px' }), ...body]),
    button: (text) => {
      const variant = pick(['fill', 'fill', 'ghost', 'soft', 'grey']);
      return chance(0.3)
        ? el('a', { href: '#', class: cls('p-btn', variant), text })
        : el('button', { class: cls('p-btn', variant), text });
    },
    iconButton: () => el('button', { class: 'p-ibtn', 'aria-label': words(1, 1) }, [icon()]),
    input: (ph) => el('input', { class: cls('p-field', pick(['box', 'box', 'under', 'filled'])), placeholder: ph, type: pick(['text', 'text', 'email', 'search', 'password']) }),
    textarea: (ph) => el('textarea', { class: 'p-field box', rows: int(2, 4), placeholder: ph, style: 'width:90%' }),
    select: (opts) => el('select', { class: 'p-field box' }, opts.map((o) => el('option', { text: o }))),
    checkbox: (text, on) => el('label', { style: 'display:block;margin:4px 0' }, [el('input', { type: 'checkbox', class: chance(0.6) ? 'p-cb' : 'p-rb', checked: on }), text]),
    radio: (name, text, on) => el('label', { style: 'display:block;margin:4px 0' }, [el('input', { type: 'radio', name, class: 'p-rb', checked: on }), ' ' + text]),
    switch: (text, on) => el('label', { style: 'display:block;margin:6px 0' }, [el('input', { type: 'checkbox', role: 'switch', class: 'p-sw', checked: on }), text]),
    range: (v) => el('input', { type: 'range', class: 'p-range', value: v }),
    progress: (v) => (chance(0.5)
      ? el('progress', { value: v, max: 100, style: 'width:80%' })
      : el('div', { class: 'p-progress', role: 'progressbar', 'aria-valuenow': v }, [el('div', { style: `width:${v}%` })])),
    tabs: (items, active) => el('div', { class: 'p-tabs', role: 'tablist' }, items.map((t, i) =>
      el('a', { href: '#', role: 'tab', class: cls('p-tab', i === active && 'on', chance(0.5) && 'boxed'), text: t }))),
    list: (items) => el('ul', { class: 'p-list' }, items.map((t) => el('li', { text: t }))),
    badge: (text) => el('span', { class: 'p-badge', text }),
  };

  const colours = (...c) => () => pick(c);
  const bsVariant = colours('primary', 'secondary', 'success', 'danger', 'warning', 'info', 'light', 'dark');
  const bootstrap = {
    css: ['fw/bootstrap/dist/css/bootstrap.min.css'],
    html: () => (chance(0.25) ? { 'data-bs-theme': 'dark' } : {}),
    wrap: 'container py-3',
    card: (title, body) => el('div', { class: 'card' }, [el('div', { class: 'card-body' }, [el('h5', { class: 'card-title', text: title }), ...body])]),
    button: (text) => el(chance(0.2) ? 'a' : 'button', {
      href: '#', class: cls('btn', pick(['btn-', 'btn-', 'btn-outline-']) + bsVariant(), pick(['', '', 'btn-sm', 'btn-lg'])), text,
    }),
    iconButton: () => el('button', { class: cls('btn', pick(['btn-light', 'btn-outline-secondary', 'btn-primary', 'btn-outline-dark']), chance(0.4) && 'btn-sm') }, [icon(16)]),
    input: (ph) => el('input', { class: cls('form-control', pick(['', '', 'form-control-sm', 'form-control-lg'])), placeholder: ph }),
    textarea: (ph) => el('textarea', { class: 'form-control', rows: int(2, 4), placeholder: ph }),
    select: (opts) => el('select', { class: cls('form-select', chance(0.3) && 'form-select-sm') }, opts.map((o) => el('option', { text: o }))),
    checkbox: (text, on) => {
      const id = nextId();
      return el('div', { class: 'form-check' }, [el('input', { class: 'form-check-input', type: 'checkbox', id, checked: on }), el('label', { class: 'form-check-label', for: id, text })]);
    },
    radio: (name, text, on) => {
      const id = nextId();
      return el('div', { class: 'form-check' }, [el('input', { class: 'form-check-input', type: 'radio', name, id, checked: on }), el('label', { class: 'form-check-label', for: id, text })]);
    },
    switch: (text, on) => {
      const id = nextId();
      return el('div', { class: 'form-check form-switch' }, [el('input', { class: 'form-check-input', type: 'checkbox', role: 'switch', id, checked: on }), el('label', { class: 'form-check-label', for: id, text })]);
    },
    range: (v) => el('input', { type: 'range', class: 'form-range', value: v }),
    progress: (v) => el('div', { class: 'progress', role: 'progressbar', 'aria-valuenow': v, style: chance(0.5) ? 'height:6px' : '' }, [
      el('div', { class: cls('progress-bar', chance(0.5) && 'bg-' + bsVariant(), chance(0.3) && 'progress-bar-striped'), style: `width:${v}%` })]),
    tabs: (items, active) => el('ul', { class: cls('nav', pick(['nav-tabs', 'nav-pills', 'nav-underline'])), role: 'tablist' }, items.map((t, i) =>
      el('li', { class: 'nav-item' }, [el('a', { class: cls('nav-link', i === active && 'active'), role: 'tab', href: '#', text: t })]))),
    list: (items) => el('ul', { class: cls('list-group', chance(0.3) && 'list-group-flush') }, items.map((t, i) =>
      el('li', { class: cls('list-group-item', i === 0 && chance(0.3) && 'active'), text: t }))),
    badge: (text) => el('span', { class: cls('badge', 'text-bg-' + bsVariant(), chance(0.4) && 'rounded-pill'), text }),
  };

  const bulmaColour = colours('primary', 'link', 'info', 'success', 'warning', 'danger', 'dark', 'light', 'white');
  const bulma = {
    css: ['fw/bulma/css/bulma.min.css'],
    html: () => ({ 'data-theme': chance(0.25) ? 'dark' : 'light' }),
    wrap: 'container p-4',
    card: (title, body) => el('div', { class: 'box' }, [el('p', { class: 'title is-5', text: title }), ...body]),
    button: (text) => el('button', { class: cls('button', 'is-' + bulmaColour(), pick(['', '', 'is-outlined', 'is-light', 'is-rounded']), pick(['', '', 'is-small', 'is-medium'])), text }),
    iconButton: () => el('button', { class: cls('button', chance(0.5) && 'is-' + bulmaColour(), chance(0.4) && 'is-small') }, [el('span', { class: 'icon' }, [icon(16)])]),
    input: (ph) => el('input', { class: cls('input', chance(0.3) && 'is-rounded', chance(0.3) && 'is-small'), placeholder: ph }),
    textarea: (ph) => el('textarea', { class: 'textarea', rows: int(2, 4), placeholder: ph }),
    select: (opts) => el('div', { class: 'select' }, [el('select', {}, opts.map((o) => el('option', { text: o })))]),
    checkbox: (text, on) => el('label', { class: 'checkbox', style: 'display:block' }, [el('input', { type: 'checkbox', checked: on }), ' ' + text]),
    radio: (name, text, on) => el('label', { class: 'radio', style: 'display:block;margin-left:0' }, [el('input', { type: 'radio', name, checked: on }), ' ' + text]),
    progress: (v) => el('progress', { class: cls('progress', 'is-' + bulmaColour(), chance(0.3) && 'is-small'), value: v, max: 100 }),
    tabs: (items, active) => el('div', { class: cls('tabs', pick(['', 'is-boxed', 'is-toggle'])) }, [el('ul', { role: 'tablist' }, items.map((t, i) =>
      el('li', { class: i === active ? 'is-active' : '' }, [el('a', { role: 'tab', href: '#', text: t })])))]),
    list: (items) => el('nav', { class: 'panel', role: 'list' }, items.map((t) => el('a', { class: 'panel-block', role: 'listitem', href: '#', text: t }))),
    badge: (text) => el('span', { class: cls('tag', 'is-' + bulmaColour(), chance(0.3) && 'is-rounded'), text }),
  };

  const pure = {
    css: ['fw/purecss/build/pure-min.css'],
    wrap: 'pure-form',
    button: (text) => el('button', { class: cls('pure-button', chance(0.5) && 'pure-button-primary'), text }),
    iconButton: () => el('button', { class: 'pure-button' }, [icon(16)]),
    input: (ph) => el('input', { type: 'text', placeholder: ph, class: chance(0.3) ? 'pure-input-rounded' : '' }),
    textarea: (ph) => el('textarea', { rows: int(2, 4), placeholder: ph, class: 'pure-input-1' }),
    select: (opts) => el('select', {}, opts.map((o) => el('option', { text: o }))),
    checkbox: (text, on) => el('label', { class: 'pure-checkbox' }, [el('input', { type: 'checkbox', checked: on }), ' ' + text]),
    radio: (name, text, on) => el('label', { class: 'pure-radio' }, [el('input', { type: 'radio', name, checked: on }), ' ' + text]),
    tabs: (items, active) => el('div', { class: 'pure-menu pure-menu-horizontal' }, [el('ul', { class: 'pure-menu-list', role: 'tablist' }, items.map((t, i) =>
      el('li', { class: cls('pure-menu-item', i === active && 'pure-menu-selected') }, [el('a', { href: '#', role: 'tab', class: 'pure-menu-link', text: t })])))]),
    list: (items) => el('table', { class: cls('pure-table', pick(['pure-table-horizontal', 'pure-table-bordered', 'pure-table-striped'])) }, [
      el('tbody', {}, items.map((t) => el('tr', {}, [el('td', { text: t }), el('td', { text: String(int(1, 99)) })])))]),
  };

  const spectre = {
    css: ['fw/spectre.css/dist/spectre.min.css'],
    wrap: 'container p-2',
    card: (title, body) => el('div', { class: 'card' }, [el('div', { class: 'card-header' }, [el('div', { class: 'card-title h5', text: title })]), el('div', { class: 'card-body' }, body)]),
    button: (text) => el('button', { class: cls('btn', pick(['', 'btn-primary', 'btn-primary', 'btn-link', 'btn-success', 'btn-error']), pick(['', '', 'btn-sm', 'btn-lg'])), text }),
    iconButton: () => el('button', { class: cls('btn btn-action', chance(0.5) && 's-circle', chance(0.5) && 'btn-primary') }, [icon(16)]),
    input: (ph) => el('input', { class: cls('form-input', chance(0.3) && 'input-sm'), placeholder: ph }),
    textarea: (ph) => el('textarea', { class: 'form-input', rows: int(2, 4), placeholder: ph }),
    select: (opts) => el('select', { class: 'form-select' }, opts.map((o) => el('option', { text: o }))),
    checkbox: (text, on) => el('label', { class: 'form-checkbox' }, [el('input', { type: 'checkbox', checked: on }), el('i', { class: 'form-icon' }), ' ' + text]),
    radio: (name, text, on) => el('label', { class: 'form-radio' }, [el('input', { type: 'radio', name, checked: on }), el('i', { class: 'form-icon' }), ' ' + text]),
    switch: (text, on) => el('label', { class: 'form-switch' }, [el('input', { type: 'checkbox', role: 'switch', checked: on }), el('i', { class: 'form-icon' }), ' ' + text]),
    range: (v) => el('input', { type: 'range', class: 'slider', value: v }),
    progress: (v) => el('progress', { class: 'progress', value: v, max: 100 }),
    tabs: (items, active) => el('ul', { class: cls('tab', chance(0.5) && 'tab-block'), role: 'tablist' }, items.map((t, i) =>
      el('li', { class: cls('tab-item', i === active && 'active') }, [el('a', { href: '#', role: 'tab', text: t })]))),
    list: (items) => el('table', { class: cls('table', chance(0.5) && 'table-striped', 'table-hover') }, [
      el('tbody', {}, items.map((t) => el('tr', {}, [el('td', { text: t }), el('td', { text: words(1, 2) })])))]),
    badge: (text) => el('span', { class: cls(pick(['label', 'chip']), chance(0.5) && 'label-primary', chance(0.4) && 'label-rounded'), text }),
  };

  const picoColours = ['amber', 'blue', 'cyan', 'fuchsia', 'green', 'grey', 'indigo', 'jade', 'lime',
    'orange', 'pink', 'pumpkin', 'purple', 'red', 'sand', 'slate', 'violet', 'yellow', 'zinc'];
  const pico = {
    css: () => [`fw/pico/css/pico.${pick(picoColours)}.min.css`],
    html: () => ({ 'data-theme': chance(0.3) ? 'dark' : 'light' }),
    wrap: 'container',
    card: (title, body) => el('article', {}, [el('header', { text: title }), ...body]),
    button: (text) => (chance(0.25)
      ? el('a', { href: '#', role: 'button', class: pick(['', 'secondary', 'outline', 'contrast']), text })
      : el('button', { class: pick(['', '', 'secondary', 'outline', 'contrast', 'secondary outline']), text })),
    iconButton: () => el('button', { class: pick(['', 'secondary', 'outline']), style: 'padding:6px 10px;width:auto', 'aria-label': words(1, 1) }, [icon(18)]),
    input: (ph) => el('input', { type: pick(['text', 'search', 'email']), placeholder: ph }),
    textarea: (ph) => el('textarea', { rows: int(2, 3), placeholder: ph }),
    select: (opts) => el('select', {}, opts.map((o) => el('option', { text: o }))),
    checkbox: (text, on) => el('label', {}, [el('input', { type: 'checkbox', checked: on }), text]),
    radio: (name, text, on) => el('label', {}, [el('input', { type: 'radio', name, checked: on }), text]),
    switch: (text, on) => el('label', {}, [el('input', { type: 'checkbox', role: 'switch', checked: on }), text]),
    range: (v) => el('input', { type: 'range', value: v }),
    progress: (v) => el('progress', { value: v, max: 100 }),
    list: (items) => el('table', { class: chance(0.5) ? 'striped' : '' }, [el('tbody', {}, items.map((t) => el('tr', {}, [el('td', { text: t }), el('td', { text: String(int(1, 500)) })])))]),
    badge: (text) => el('mark', { text }),
  };

  const mzColour = () => pick(['red', 'pink', 'purple', 'deep-purple', 'indigo', 'blue', 'light-blue', 'cyan',
    'teal', 'green', 'light-green', 'amber', 'orange', 'deep-orange', 'brown', 'grey', 'blue-grey']) +
    pick(['', '', ' lighten-1', ' darken-2']);
  const materialize = {
    css: ['fw/materialize-css/dist/css/materialize.min.css'],
    wrap: 'container',
    card: (title, body) => el('div', { class: 'card' }, [el('div', { class: 'card-content' }, [el('span', { class: 'card-title', text: title }), ...body])]),
    button: (text) => (chance(0.2)
      ? el('a', { href: '#', class: 'btn-flat waves-effect', text })
      : el(chance(0.5) ? 'a' : 'button', { href: '#', class: cls(pick(['btn', 'btn', 'btn-small', 'btn-large']), 'waves-effect waves-light', chance(0.6) && mzColour()), text })),
    iconButton: () => el('a', { href: '#', class: cls('btn-floating', chance(0.5) && 'btn-small', mzColour()), style: 'display:inline-flex;align-items:center;justify-content:center;color:#fff' }, [icon(18)]),
    input: (ph) => el('input', { type: 'text', placeholder: ph, style: 'max-width:95%' }),
    textarea: (ph) => el('textarea', { class: 'materialize-textarea', placeholder: ph }),
    select: (opts) => el('select', { class: 'browser-default' }, opts.map((o) => el('option', { text: o }))),
    checkbox: (text, on) => el('p', {}, [el('label', {}, [el('input', { type: 'checkbox', class: chance(0.4) ? 'filled-in' : '', checked: on }), el('span', { text })])]),
    radio: (name, text, on) => el('p', {}, [el('label', {}, [el('input', { type: 'radio', name, class: chance(0.3) ? 'with-gap' : '', checked: on }), el('span', { text })])]),
    switch: (text, on) => el('div', { class: 'switch' }, [el('label', {}, ['Off', el('input', { type: 'checkbox', role: 'switch', checked: on }), el('span', { class: 'lever' }), 'On'])]),
    range: (v) => el('p', { class: 'range-field' }, [el('input', { type: 'range', value: v })]),
    progress: (v) => el('div', { class: 'progress', role: 'progressbar' }, [el('div', { class: 'determinate', style: `width:${v}%` })]),
    tabs: (items, active) => el('ul', { class: 'tabs', role: 'tablist', style: 'overflow:hidden' }, items.map((t, i) =>
      el('li', { class: 'tab' }, [el('a', { href: '#', role: 'tab', class: i === active ? 'active' : '', text: t })]))),
    list: (items) => el('ul', { class: 'collection' }, items.map((t, i) => el('li', { class: cls('collection-item', i === 0 && chance(0.3) && 'active'), text: t }))),
    badge: (text) => el('span', { class: chance(0.5) ? 'chip' : cls('new badge', mzColour()), style: 'float:none', text }),
  };

  const suiColour = () => pick(['', '', 'primary', 'secondary', 'red', 'orange', 'yellow', 'olive', 'green', 'teal', 'blue', 'violet', 'purple', 'pink', 'brown', 'grey', 'black']);
  const semantic = {
    // The components one by one: the bundle's first line imports a web font from the
    // network, which is closed here.
    css: ['reset', 'button', 'container', 'checkbox', 'form', 'header', 'input', 'label', 'list',
      'menu', 'progress', 'segment'].map((c) => `fw/semantic-ui-css/components/${c}.min.css`),
    wrap: 'ui container',
    card: (title, body) => el('div', { class: 'ui segment' }, [el('h4', { class: 'ui header', text: title }), ...body]),
    button: (text) => el('button', { class: cls('ui', suiColour(), chance(0.25) && 'basic', pick(['', '', 'mini', 'small', 'large']), chance(0.15) && 'circular', 'button'), text }),
    iconButton: () => el('button', { class: cls('ui icon', chance(0.5) && 'basic', chance(0.3) && 'circular', suiColour(), 'button') }, [icon(14)]),
    input: (ph) => el('div', { class: cls('ui', chance(0.3) && 'small', 'input') }, [el('input', { type: 'text', placeholder: ph })]),
    textarea: (ph) => el('div', { class: 'ui form' }, [el('textarea', { rows: int(2, 4), placeholder: ph })]),
    select: (opts) => el('div', { class: 'ui form' }, [el('select', {}, opts.map((o) => el('option', { text: o })))]),
    checkbox: (text, on) => {
      const id = nextId();
      return el('div', { class: 'ui checkbox', style: 'display:block;margin:6px 0' }, [el('input', { type: 'checkbox', id, checked: on }), el('label', { for: id, text })]);
    },
    radio: (name, text, on) => {
      const id = nextId();
      return el('div', { class: 'ui radio checkbox', style: 'display:block;margin:6px 0' }, [el('input', { type: 'radio', name, id, checked: on }), el('label', { for: id, text })]);
    },
    switch: (text, on) => {
      const id = nextId();
      return el('div', { class: cls('ui', pick(['toggle', 'slider']), 'checkbox'), style: 'display:block;margin:6px 0' }, [el('input', { type: 'checkbox', role: 'switch', id, checked: on }), el('label', { for: id, text })]);
    },
    progress: (v) => el('div', { class: cls('ui', suiColour(), chance(0.4) && 'small', 'progress'), role: 'progressbar' }, [el('div', { class: 'bar', style: `width:${v}%;min-width:0` })]),
    tabs: (items, active) => el('div', { class: cls('ui', pick(['top attached tabular', 'secondary pointing', 'pointing', 'secondary']), 'menu'), role: 'tablist' }, items.map((t, i) =>
      el('a', { href: '#', role: 'tab', class: cls(i === active && 'active', 'item'), text: t }))),
    list: (items) => el('div', { class: cls('ui', pick(['vertical menu', 'celled list', 'divided selection list'])), role: 'list' }, items.map((t) => el('a', { href: '#', role: 'listitem', class: 'item', text: t }))),
    badge: (text) => el('span', { class: cls('ui', suiColour(), chance(0.3) && 'circular', 'label'), text }),
  };

  const uikit = {
    css: ['fw/uikit/dist/css/uikit.min.css'],
    wrap: 'uk-container uk-padding-small',
    card: (title, body) => el('div', { class: cls('uk-card', pick(['uk-card-default', 'uk-card-default', 'uk-card-primary', 'uk-card-secondary']), 'uk-card-body uk-card-small') }, [el('h3', { class: 'uk-card-title', text: title }), ...body]),
    button: (text) => el('button', { class: cls('uk-button', pick(['uk-button-default', 'uk-button-primary', 'uk-button-secondary', 'uk-button-danger']), pick(['', '', 'uk-button-small', 'uk-button-large'])), text }),
    iconButton: () => el('a', { href: '#', class: 'uk-icon-button', style: 'color:#666' }, [icon(16)]),
    input: (ph) => el('input', { class: cls('uk-input', chance(0.3) && 'uk-form-small'), placeholder: ph }),
    textarea: (ph) => el('textarea', { class: 'uk-textarea', rows: int(2, 4), placeholder: ph }),
    select: (opts) => el('select', { class: 'uk-select' }, opts.map((o) => el('option', { text: o }))),
    checkbox: (text, on) => el('label', { style: 'display:block;margin:4px 0' }, [el('input', { class: 'uk-checkbox', type: 'checkbox', checked: on }), ' ' + text]),
    radio: (name, text, on) => el('label', { style: 'display:block;margin:4px 0' }, [el('input', { class: 'uk-radio', type: 'radio', name, checked: on }), ' ' + text]),
    range: (v) => el('input', { class: 'uk-range', type: 'range', value: v }),
    progress: (v) => el('progress', { class: 'uk-progress', value: v, max: 100 }),
    tabs: (items, active) => el('ul', { class: pick(['uk-tab', 'uk-subnav uk-subnav-pill', 'uk-subnav uk-subnav-divider']), role: 'tablist' }, items.map((t, i) =>
      el('li', { class: i === active ? 'uk-active' : '' }, [el('a', { href: '#', role: 'tab', text: t })]))),
    list: (items) => el('ul', { class: cls('uk-list', pick(['uk-list-divider', 'uk-list-striped'])) }, items.map((t) => el('li', { text: t }))),
    badge: (text) => el('span', { class: pick(['uk-badge', 'uk-label', 'uk-label uk-label-success', 'uk-label uk-label-danger']), text }),
  };

  const THEMES = { plain, bootstrap, bulma, pure, spectre, pico, materialize, semantic, uikit };

  // ---- the page -------------------------------------------------------------------
  // One part of a card: what a settings panel, a form or a toolbar would hold.
  function part(t) {
    const f = (name, ...a) => (t[name] || plain[name])(...a);
    const row = (children) => el('div', { style: `display:flex;flex-wrap:wrap;align-items:center;gap:${int(6, 12)}px;margin:8px 0` }, children);
    switch (int(0, 16)) {
      case 0: case 1: return row(Array.from({ length: int(1, 3) }, () => f('button', words(1, 2))));
      case 2: return row(Array.from({ length: int(2, 6) }, () => f('iconButton')));
      case 3: {
        const label = chance(0.6) ? [el('label', { text: words(1, 2), style: 'display:block;margin:6px 0 2px' })] : [];
        return el('div', {}, [...label, f('input', words(1, 3))]);
      }
      case 4: return f('textarea', sentence());
      case 5: return el('div', { style: 'margin:6px 0' }, [f('select', Array.from({ length: 4 }, () => words(1, 2)))]);
      case 6: return el('div', {}, Array.from({ length: int(2, 4) }, () => f('checkbox', words(1, 3), chance(0.5))));
      case 7: {
        const name = nextId();
        const n = int(2, 4);
        const on = int(0, n - 1);
        return el('div', {}, Array.from({ length: n }, (_, i) => f('radio', name, words(1, 2), i === on)));
      }
      case 8: return el('div', {}, Array.from({ length: int(1, 3) }, () => f('switch', words(1, 3), chance(0.5))));
      case 9: return el('div', { style: 'margin:8px 0' }, [f('range', int(0, 100))]);
      case 10: return el('div', { style: 'margin:10px 0' }, [f('progress', int(5, 95))]);
      case 11: return f('list', Array.from({ length: int(3, 5) }, () => words(1, 4)));
      case 12: return row(Array.from({ length: int(1, 4) }, () => f('badge', chance(0.5) ? String(int(1, 99)) : words(1, 1))));
      case 13: {
        // A picture with a caption, or a row of thumbnails.
        if (chance(0.5)) {
          const w = int(120, 260);
          return el('figure', { style: 'margin:6px 0' }, [picture(w, Math.round(w * pick([0.5, 0.6, 0.75, 1]))), el('figcaption', { text: words(2, 5) })]);
        }
        const s = int(40, 72);
        return row(Array.from({ length: int(2, 4) }, () => picture(s, s, chance(0.3) ? 'border-radius:50%' : '')));
      }
      case 14: {
        // An icon beside a line of text: a feature list, a contact line.
        return el('div', {}, Array.from({ length: int(1, 3) }, () =>
          el('div', { style: 'display:flex;align-items:center;gap:8px;margin:4px 0' }, [icon(), el('span', { text: words(2, 5) })])));
      }
      case 15: {
        // A palette of small bordered tiles showing only an icon, picked like buttons.
        return el('ul', { style: 'padding:0;margin:6px 0' }, Array.from({ length: int(6, 16) }, () =>
          el('li', { class: 'p-tile', title: words(1, 1) }, [icon(int(12, 16))])));
      }
      default: return el('p', { text: chance(0.5) ? sentence() : sentence() + ' ' + sentence() });
    }
  }

  function header(t) {
    const f = (name, ...a) => (t[name] || plain[name])(...a);
    const items = Array.from({ length: int(2, 5) }, () => words(1, 1));
    return el('header', { class: 'p-bar', style: 'display:flex;flex-wrap:wrap;align-items:center;gap:12px;padding:10px 16px' }, [
      el('strong', { text: words(1, 2), style: `font-size:${int(16, 24)}px` }),
      f('tabs', items, int(0, items.length - 1)),
      el('span', { style: 'flex:1' }),
      ...(chance(0.5) ? [f('input', 'Search')] : []),
      ...Array.from({ length: int(0, 3) }, () => f('iconButton')),
    ]);
  }

  async function build() {
    const t = THEMES[themeName];
    if (!t) throw new Error(`unknown theme ${themeName}; one of ${Object.keys(THEMES).join(', ')}`);
    await loadIcons();
    for (const [k, v] of Object.entries(t.html ? t.html() : {})) document.documentElement.setAttribute(k, v);
    // The drawn sheet styles the plain builders (`p-*` classes), which are also the
    // fall-backs of a framework without its own switch or slider; in a framework's page the
    // framework keeps the page's own colours and font.
    let drawn = plainStyles();
    if (themeName !== 'plain') drawn = drawn.replace(/^\s*body \{[^}]*\}/m, '');
    document.head.append(el('style', { text: drawn }));
    const sheets = typeof t.css === 'function' ? t.css() : t.css;
    await Promise.all(sheets.map((href) => new Promise((resolve, reject) => {
      const link = el('link', { rel: 'stylesheet', href });
      link.onload = resolve;
      link.onerror = () => reject(new Error(`cannot load ${href}`));
      document.head.append(link);
    })));
    const wrap = el('main', { class: t.wrap || '', style: 'padding-top:12px;padding-bottom:24px' });
    const grid = el('div', { style: `display:grid;grid-template-columns:repeat(auto-fill,minmax(${int(240, 320)}px,1fr));gap:${int(12, 24)}px;align-items:start` });
    for (let i = int(6, 10); i > 0; i--) {
      const body = Array.from({ length: int(2, 5) }, () => part(t));
      if (chance(0.4)) body.unshift(el('p', { text: sentence(), style: 'margin:0 0 8px' }));
      grid.append((t.card || plain.card)(words(1, 3), body));
    }
    wrap.append(grid);
    document.body.append(header(t), wrap);
    // Links go nowhere: a click while labelling must not leave the page.
    document.addEventListener('click', (e) => e.preventDefault());
    await document.fonts.ready;
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return true;
  }

  window.galleryReady = build();
})();

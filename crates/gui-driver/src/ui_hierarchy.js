// The DOM seen as a view hierarchy (VisionDroid, Section III-A1): every visible element a
// user can act on, plus every visible element that shows text of its own, with the
// attributes a UI Automator dump would give. Evaluated with the command line API so that
// getEventListeners can tell which plain elements listen for clicks.
(() => {
  const LIMIT = 1500;
  const W = innerWidth, H = innerHeight;
  const TEXT_TYPES = ['', 'text', 'email', 'password', 'search', 'tel', 'url', 'number', 'date', 'time', 'datetime-local', 'month', 'week'];
  const CLICK_ROLES = ['button', 'link', 'tab', 'menuitem', 'option', 'treeitem', 'gridcell'];
  const CHECK_ROLES = ['checkbox', 'switch', 'radio', 'menuitemcheckbox', 'menuitemradio'];
  const listens = (el, types) => {
    try {
      const ls = getEventListeners(el) || {};
      return types.some(t => ls[t] && ls[t].length > 0);
    } catch (e) { return false; }
  };
  const clean = t => (t || '').toString().replace(/\s+/g, ' ').trim().slice(0, 120);
  const ownText = el => {
    let t = '';
    for (const n of el.childNodes) if (n.nodeType === 3) t += n.textContent;
    return clean(t);
  };
  const visible = (el, r) => {
    if (r.width < 1 || r.height < 1) return false;
    if (r.right <= 0 || r.bottom <= 0 || r.left >= W || r.top >= H) return false;
    const st = getComputedStyle(el);
    return st.visibility !== 'hidden' && st.display !== 'none' && Number(st.opacity) > 0.05;
  };
  const out = [];
  const walk = root => {
    for (const el of root.querySelectorAll('*')) {
      if (out.length >= LIMIT) return;
      if (el.shadowRoot) walk(el.shadowRoot);
      const tag = el.tagName.toLowerCase();
      if (['script', 'style', 'head', 'meta', 'link', 'title', 'template', 'noscript', 'br'].includes(tag)) continue;
      if (el.closest('[inert], [aria-hidden=true]')) continue;
      const r = el.getBoundingClientRect();
      if (!visible(el, r)) continue;
      const type = (el.getAttribute('type') || '').toLowerCase();
      const role = (el.getAttribute('role') || '').toLowerCase();
      const disabled = !!el.disabled;
      const editable = !disabled && ((tag === 'input' && TEXT_TYPES.includes(type)) || tag === 'textarea' || el.isContentEditable);
      const checkable = !disabled && ((tag === 'input' && (type === 'checkbox' || type === 'radio')) || CHECK_ROLES.includes(role));
      const native = ['button', 'select', 'summary'].includes(tag) || (tag === 'a' && el.hasAttribute('href'))
        || (tag === 'input' && ['button', 'submit', 'reset', 'image', 'file', 'range', 'color'].includes(type));
      const clickable = !disabled && !editable && !checkable
        && (native || CLICK_ROLES.includes(role) || el.hasAttribute('onclick') || listens(el, ['click', 'mousedown', 'pointerdown', 'touchstart']));
      const longClickable = !disabled && (el.hasAttribute('oncontextmenu') || listens(el, ['contextmenu']));
      const st = getComputedStyle(el);
      const scrollable = ((st.overflowY === 'auto' || st.overflowY === 'scroll') && el.scrollHeight > el.clientHeight + 1)
        || ((st.overflowX === 'auto' || st.overflowX === 'scroll') && el.scrollWidth > el.clientWidth + 1);
      const actionable = editable || checkable || clickable || longClickable || scrollable;
      let text;
      if (tag === 'input' || tag === 'textarea') text = clean(el.value);
      else if (tag === 'select') text = clean(el.selectedOptions && el.selectedOptions[0] ? el.selectedOptions[0].text : '');
      else text = actionable && !scrollable ? clean(el.innerText) : ownText(el);
      // An element with text inside an actionable one is already described by it.
      if (!actionable && (!text || el.parentElement && el.parentElement.closest('button, a[href], [role=button], [role=link], [role=tab], summary, select'))) continue;
      let hint = clean(el.getAttribute('placeholder') || el.getAttribute('aria-label') || el.getAttribute('title') || el.getAttribute('alt'));
      if (!hint && (checkable || editable || tag === 'select') && el.labels && el.labels[0]) hint = clean(el.labels[0].innerText);
      out.push({
        bounds: [r.left, r.top, r.width, r.height],
        class: tag + (tag === 'input' ? '[' + (type || 'text') + ']' : (role ? '[role=' + role + ']' : '')),
        id: el.id || '',
        text, hint,
        clickable, long_clickable: longClickable, checkable,
        checked: !!(el.checked || el.getAttribute('aria-checked') === 'true'),
        scrollable, editable,
      });
    }
  };
  walk(document);
  if (document.scrollingElement && document.scrollingElement.scrollHeight > H + 1) {
    out.push({ bounds: [0, 0, W, H], class: 'document', id: '', text: '', hint: 'page', clickable: false,
      long_clickable: false, checkable: false, checked: false, scrollable: true, editable: false });
  }
  return { app: clean(document.title), screen: location.pathname + location.hash, elements: out };
})()

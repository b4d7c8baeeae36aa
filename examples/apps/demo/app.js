/* Demo app for the GUI explorer. Plain JS, no dependencies.
 * All state lives in the global `state` object. Nothing is read from storage
 * on load, and nothing random or time-of-day dependent is shown, so every run
 * starts from the same screen content. */

'use strict';

var SCREENS = {
  home: 'Home',
  login: 'Login',
  account: 'Account',
  form: 'Profile form',
  list: 'Todo list',
  cart: 'Cart',
  canvas: 'Canvas',
  slow: 'Slow page',
  settings: 'Settings',
  about: 'About',
  feed: 'News feed',
  gallery: 'Gallery'
};

var GIFT_LIMIT = 2;          // free gift wrap is limited to two units per product
var SLOW_CONTENT_DELAY = 1200;
var SLOW_IMAGE_DELAYS = [300, 540, 780, 1020, 1260, 1500];
var FEED_DELAY = 700;        // the feed's cards replace their skeletons (bug E)
var GALLERY_DELAYS = [200, 300, 400, 500, 600, 700, 800, 900];
var CANVAS_BACKGROUNDS = ['#eef1f5', '#dbeafe', '#fef3c7', '#dcfce7'];

var state = {
  route: null,
  signedIn: false,
  user: '',
  loginRedirected: false,
  homeCounter: 0,
  form: { submitted: null },
  list: {
    items: [
      { id: 1, text: 'Buy milk', done: false },
      { id: 2, text: 'Write report', done: false },
      { id: 3, text: 'Call Alice', done: false },
      { id: 4, text: 'Water plants', done: false },
      { id: 5, text: 'Book tickets', done: false }
    ],
    nextId: 6,
    allSelected: false,
    archived: [],
    lastArchived: null,
    pendingRemoveId: null,
    focusIndex: 0
  },
  cart: {
    products: [
      { id: 1, name: 'Pen', price: 250, qty: 1 },
      { id: 2, name: 'Notebook', price: 400, qty: 1 },
      { id: 3, name: 'Mug', price: 725, qty: 1 }
    ]
  },
  coupon: null,
  canvas: { bgIndex: 0, counter: 0 },
  slowTimers: [],
  feed: { timer: null, offer: null },
  galleryTimers: [],
  settings: { dark: false, notifications: true },
  notifier: null,              // announces home-counter milestones (set in init)
  helpOpen: false,
  confirmOpen: false
};

/* ---------- small helpers ---------- */

function byId(id) {
  return document.getElementById(id);
}

function setText(id, text) {
  byId(id).textContent = text;
}

function showMessage(id, text) {
  var el = byId(id);
  el.textContent = text;
  el.hidden = !text;
}

function formatMoney(cents) {
  var dollars = Math.floor(cents / 100);
  var rest = cents % 100;
  return '$' + dollars + '.' + (rest < 10 ? '0' : '') + rest;
}

/* ---------- routing ---------- */

function parseRoute(hash) {
  var name = (hash || '').replace(/^#\/?/, '').split('/')[0];
  return SCREENS.hasOwnProperty(name) ? name : null;
}

function navigate(name) {
  window.location.hash = '#/' + name;
}

function onNavClick(event) {
  navigate(event.currentTarget.getAttribute('data-route'));
}

function goHome() {
  navigate('home');
}

function handleRoute() {
  var name = parseRoute(window.location.hash);
  if (!name) {
    window.location.replace('#/home');
    return;
  }
  if (name === 'account' && !state.signedIn) {
    state.loginRedirected = true;
    window.location.replace('#/login');
    return;
  }
  var previous = state.route;
  if (previous !== name) {
    leaveScreen(previous);
  }
  state.route = name;
  closeHelp();
  closeConfirm();
  showScreen(name);
  enterScreen(name, previous);
}

function showScreen(name) {
  var sections = document.querySelectorAll('.screen');
  for (var i = 0; i < sections.length; i++) {
    sections[i].hidden = sections[i].getAttribute('data-screen') !== name;
  }
  setText('screen-name', SCREENS[name]);
  byId('backbar').hidden = name === 'home';
  document.title = 'Demo App - ' + SCREENS[name];
  window.scrollTo(0, 0);
}

function enterScreen(name, previous) {
  if (name === 'home') renderHome();
  if (name === 'login') renderLogin();
  if (name === 'account') renderAccount();
  if (name === 'list') renderList();
  if (name === 'cart') renderCart();
  if (name === 'canvas') drawCanvas();
  if (name === 'slow' && previous !== 'slow') startSlowPage();
  if (name === 'feed' && previous !== 'feed') startFeed();
  if (name === 'gallery' && previous !== 'gallery') startGallery();
  if (name === 'settings') renderSettings();
}

function leaveScreen(name) {
  if (name === 'slow') stopSlowPage();
  if (name === 'feed') stopFeed();
  if (name === 'gallery') stopGallery();
  if (name === 'list') leaveList();
  if (name === 'login') state.loginRedirected = false;
}

function renderHeader() {
  setText('header-user', state.signedIn ? 'Signed in as ' + state.user : 'Guest');
}

/* ---------- home ---------- */

function renderHome() {
  setText('home-counter', String(state.homeCounter));
}

function incrementHomeCounter() {
  state.homeCounter += 1;
  renderHome();
  state.notifier.count(state.homeCounter);
}

/* Announces every tenth click of the home counter while notifications are on. */
function makeNotifier() {
  return {
    count: function (n) {
      if (n % 10 === 0) showMessage('home-note', 'You reached ' + n + ' clicks.');
    }
  };
}

/* ---------- login / account ---------- */

function renderLogin() {
  if (state.signedIn) {
    setText('login-note', 'You are already signed in as ' + state.user + '.');
  } else if (state.loginRedirected) {
    setText('login-note', 'Please sign in to see your account. The password is "demo".');
  } else {
    setText('login-note', 'Any user name works. The password is "demo".');
  }
}

function submitLogin(event) {
  event.preventDefault();
  var user = byId('login-user').value.trim();
  var pass = byId('login-pass').value;
  if (!user) {
    showMessage('login-error', 'Please enter a user name.');
    return;
  }
  if (pass !== 'demo') {
    showMessage('login-error', 'Wrong user name or password.');
    byId('login-pass').value = '';
    return;
  }
  showMessage('login-error', '');
  state.signedIn = true;
  state.user = user;
  byId('login-pass').value = '';
  renderHeader();
  navigate('account');
}

function renderAccount() {
  setText('account-user', state.user);
}

function signOut() {
  state.signedIn = false;
  state.user = '';
  renderHeader();
  navigate('home');
}

/* ---------- profile form ---------- */

function updateVolume() {
  var value = byId('form-volume').value;
  setText('form-volume-value', value);
  byId('form-progress').value = Number(value);
}

function isValidEmail(value) {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value);
}

function readProfile() {
  var plan = document.querySelector('input[name=plan]:checked');
  return {
    name: byId('form-name').value.trim(),
    email: byId('form-email').value.trim(),
    subscribe: byId('form-subscribe').checked,
    plan: plan ? plan.value : 'basic',
    volume: Number(byId('form-volume').value),
    color: byId('form-color').value,
    public: byId('form-public').checked
  };
}

function submitProfile(event) {
  event.preventDefault();
  var profile = readProfile();
  if (!isValidEmail(profile.email)) {
    console.error('invalid email: ' + profile.email);
    showMessage('form-result', '');
    showMessage('form-error', 'Please enter a valid email address.');
    return;
  }
  state.form.submitted = profile;
  showMessage('form-error', '');
  showMessage('form-result', 'Saved profile for ' + (profile.name || 'anonymous') +
    ' (' + profile.plan + ' plan).');
}

/* ---------- todo list ---------- */

function indexOfItem(id) {
  var items = state.list.items;
  for (var i = 0; i < items.length; i++) {
    if (items[i].id === id) return i;
  }
  return -1;
}

function buildListRow(item) {
  var li = document.createElement('li');
  li.id = 'list-item-' + item.id;
  if (item.done) li.className = 'done';

  var box = document.createElement('input');
  box.type = 'checkbox';
  box.id = 'list-check-' + item.id;
  box.checked = item.done;
  box.setAttribute('data-id', String(item.id));
  box.setAttribute('aria-label', 'Select ' + item.text);
  box.addEventListener('change', toggleItem);

  var text = document.createElement('label');
  text.className = 'item-text';
  text.htmlFor = box.id;
  text.id = 'list-text-' + item.id;
  text.textContent = item.text;

  var remove = document.createElement('button');
  remove.type = 'button';
  remove.id = 'list-remove-' + item.id;
  remove.className = 'btn btn-danger';
  remove.textContent = 'Remove';
  remove.setAttribute('data-id', String(item.id));
  remove.addEventListener('click', askRemoveItem);

  li.appendChild(box);
  li.appendChild(text);
  li.appendChild(remove);
  return li;
}

function renderList() {
  var list = state.list;
  var ul = byId('list-items');
  ul.textContent = '';
  var selected = 0;
  for (var i = 0; i < list.items.length; i++) {
    if (list.items[i].done) selected += 1;
    ul.appendChild(buildListRow(list.items[i]));
  }
  setText('list-count', list.items.length + ' items, ' + selected + ' selected, ' +
    list.archived.length + ' archived.');
}

function setListStatus(text) {
  setText('list-status', text);
}

function toggleItem(event) {
  var id = Number(event.currentTarget.getAttribute('data-id'));
  var item = state.list.items[indexOfItem(id)];
  item.done = event.currentTarget.checked;
  state.list.allSelected = false;
  setListStatus('');
  renderList();
}

function addItem(event) {
  event.preventDefault();
  var input = byId('list-new');
  var text = input.value.trim();
  if (!text) {
    setListStatus('Type something first.');
    return;
  }
  state.list.items.push({ id: state.list.nextId, text: text, done: false });
  state.list.nextId += 1;
  state.list.allSelected = false;
  input.value = '';
  setListStatus('Added "' + text + '".');
  renderList();
}

function selectAllItems() {
  var items = state.list.items;
  for (var i = 0; i < items.length; i++) items[i].done = true;
  state.list.allSelected = true;
  setListStatus('All items selected.');
  renderList();
}

function archiveSelected() {
  var list = state.list;
  if (list.allSelected) {
    // Everything is selected: move the whole array over in one go.
    list.lastArchived = { all: list.items };
    list.archived = list.archived.concat(list.items);
    list.items = [];
    list.allSelected = false;
    setListStatus('Archived everything.');
    renderList();
    return;
  }
  var entries = [];
  var kept = [];
  for (var i = 0; i < list.items.length; i++) {
    if (list.items[i].done) {
      entries.push({ index: i, item: list.items[i] });
    } else {
      kept.push(list.items[i]);
    }
  }
  if (entries.length === 0) {
    setListStatus('Select items to archive first.');
    return;
  }
  list.items = kept;
  list.lastArchived = { entries: entries };
  for (var j = 0; j < entries.length; j++) list.archived.push(entries[j].item);
  setListStatus('Archived ' + entries.length + ' item(s).');
  renderList();
}

function undoArchive() {
  var list = state.list;
  var snapshot = list.lastArchived;
  if (!snapshot) {
    setListStatus('Nothing to undo.');
    return;
  }
  // Put each item back at the position it had before archiving.
  for (var i = 0; i < snapshot.entries.length; i++) {
    var entry = snapshot.entries[i];
    list.items.splice(entry.index, 0, entry.item);
    list.archived.splice(list.archived.indexOf(entry.item), 1);
  }
  list.lastArchived = null;
  setListStatus('Restored ' + snapshot.entries.length + ' item(s).');
  renderList();
}

function leaveList() {
  state.list.lastArchived = null;
  state.list.allSelected = false;
  setListStatus('');
}

function askRemoveItem(event) {
  var id = Number(event.currentTarget.getAttribute('data-id'));
  var item = state.list.items[indexOfItem(id)];
  state.list.pendingRemoveId = id;
  setText('confirm-text', 'Remove "' + item.text + '" from the list?');
  openConfirm();
}

function focusAfterRemoval(index, length) {
  // Keep the cursor on a row that still exists once one row is gone.
  return Math.min(index, length - 2);
}

function confirmRemove() {
  var list = state.list;
  var index = indexOfItem(list.pendingRemoveId);
  if (index < 0) {
    closeConfirm();
    return;
  }
  var at = focusAfterRemoval(index, list.items.length);
  var removed = list.items.splice(at, 1)[0];
  list.focusIndex = Math.max(at, 0);
  list.pendingRemoveId = null;
  closeConfirm();
  setListStatus('Removed "' + removed.text + '".');
  renderList();
}

/* ---------- cart ---------- */

function cartTotal() {
  var products = state.cart.products;
  var total = 0;
  for (var i = 0; i < products.length; i++) {
    var p = products[i];
    var units = i === 0 ? p.qty : Math.min(p.qty, GIFT_LIMIT);
    total += units * p.price;
  }
  return total;
}

function renderCart() {
  var products = state.cart.products;
  for (var i = 0; i < products.length; i++) {
    var p = products[i];
    setText('cart-qty-' + p.id, String(p.qty));
    setText('cart-line-' + p.id, formatMoney(p.qty * p.price));
  }
  setText('cart-total', formatMoney(cartTotal()));
}

function changeQuantity(event) {
  var id = event.currentTarget.id;             // cart-inc-2 / cart-dec-2
  var step = id.indexOf('cart-inc-') === 0 ? 1 : -1;
  var productId = Number(id.slice(id.lastIndexOf('-') + 1));
  var product = state.cart.products[productId - 1];
  product.qty = Math.max(0, Math.min(9, product.qty + step));
  showMessage('cart-message', '');
  renderCart();
}

function couponPercent(code) {
  if (code === 'SAVE10') return 10;
  if (code === 'HALF') return 50;
  return 5;
}

function applyCoupon() {
  var code = byId('cart-coupon').value.trim().toUpperCase();
  if (!code) {
    setText('cart-coupon-status', 'Enter a coupon code first.');
    return;
  }
  state.coupon = { code: code, percent: couponPercent(code) };
  setText('cart-coupon-status', 'Coupon ' + code + ' applied (' + state.coupon.percent +
    '% off at checkout).');
}

function checkout() {
  var total = cartTotal();
  if (state.coupon) {
    total -= Math.round(total * state.coupon.rule.percent / 100);
  }
  showMessage('cart-message', 'Order placed. You paid ' + formatMoney(total) + '.');
}

/* ---------- canvas toolbar (pixels only) ---------- */

var CANVAS_BUTTONS = [
  { label: 'Home', color: '#1f5fd1', action: canvasGoHome },
  { label: 'Help', color: '#7b3fc4', action: openHelp },
  { label: 'Colour', color: '#0f7b6c', action: canvasNextBackground },
  { label: 'Count +1', color: '#c2410c', action: canvasIncrement }
];

function canvasButtonRect(index) {
  return { x: 12 + index * 147, y: 44, w: 135, h: 64 };
}

function drawCanvas() {
  var canvas = byId('canvas-toolbar');
  var ctx = canvas.getContext('2d');
  ctx.fillStyle = CANVAS_BACKGROUNDS[state.canvas.bgIndex];
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = '#1b1f24';
  ctx.font = 'bold 18px sans-serif';
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  ctx.fillText('Canvas counter: ' + state.canvas.counter, 12, 22);
  for (var i = 0; i < CANVAS_BUTTONS.length; i++) {
    drawCanvasButton(ctx, CANVAS_BUTTONS[i], canvasButtonRect(i));
  }
}

function drawCanvasButton(ctx, button, r) {
  ctx.fillStyle = button.color;
  ctx.fillRect(r.x, r.y, r.w, r.h);
  ctx.lineWidth = 3;
  ctx.strokeStyle = '#1b1f24';
  ctx.strokeRect(r.x, r.y, r.w, r.h);
  ctx.fillStyle = '#ffffff';
  ctx.font = 'bold 20px sans-serif';
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  ctx.fillText(button.label, r.x + r.w / 2, r.y + r.h / 2);
}

function canvasHitTest(x, y) {
  for (var i = 0; i < CANVAS_BUTTONS.length; i++) {
    var r = canvasButtonRect(i);
    if (x >= r.x && x <= r.x + r.w && y >= r.y && y <= r.y + r.h) return CANVAS_BUTTONS[i];
  }
  return null;
}

function onCanvasClick(event) {
  var canvas = event.currentTarget;
  var rect = canvas.getBoundingClientRect();
  // The canvas may be scaled down by CSS on small screens; skip its border.
  var left = rect.left + canvas.clientLeft;
  var top = rect.top + canvas.clientTop;
  var x = (event.clientX - left) * canvas.width / canvas.clientWidth;
  var y = (event.clientY - top) * canvas.height / canvas.clientHeight;
  var button = canvasHitTest(x, y);
  if (button) button.action();
}

function canvasGoHome() {
  navigate('home');
}

function canvasNextBackground() {
  state.canvas.bgIndex = (state.canvas.bgIndex + 1) % CANVAS_BACKGROUNDS.length;
  drawCanvas();
}

function canvasIncrement() {
  state.canvas.counter += 1;
  drawCanvas();
}

/* ---------- slow page ---------- */

function startSlowPage() {
  stopSlowPage();
  byId('slow-spinner').hidden = false;
  byId('slow-content').hidden = true;
  for (var n = 1; n <= SLOW_IMAGE_DELAYS.length; n++) {
    var tile = byId('slow-img-' + n);
    tile.innerHTML = '<div class="placeholder"></div>';
    state.slowTimers.push(setTimeout(loadSlowImage, SLOW_IMAGE_DELAYS[n - 1], n));
  }
  state.slowTimers.push(setTimeout(showSlowContent, SLOW_CONTENT_DELAY));
}

function showSlowContent() {
  byId('slow-spinner').hidden = true;
  byId('slow-content').hidden = false;
}

function loadSlowImage(n) {
  placePicture('slow-img-' + n, 'slow-pic-' + n, 'Picture ' + n, n);
}

/* Replaces the placeholder in tile `tileId` with shape picture `shape` (1-6). */
function placePicture(tileId, id, alt, shape) {
  var img = document.createElement('img');
  img.id = id;
  img.alt = alt;
  img.width = 96;
  img.height = 96;
  img.src = 'img/shape' + shape + '.svg';
  var tile = byId(tileId);
  tile.textContent = '';
  tile.appendChild(img);
}

function stopSlowPage() {
  for (var i = 0; i < state.slowTimers.length; i++) clearTimeout(state.slowTimers[i]);
  state.slowTimers = [];
  byId('slow-spinner').hidden = true;
}

/* ---------- news feed (explicit loading) ---------- */

function startFeed() {
  stopFeed();
  state.feed.offer = null;
  byId('feed-spinner').hidden = false;
  setText('feed-status', 'Loading the feed...');
  byId('feed-skeleton').hidden = false;
  byId('feed-items').hidden = true;
  showMessage('feed-message', '');
  state.feed.timer = setTimeout(showFeed, FEED_DELAY);
}

function showFeed() {
  state.feed.timer = null;
  // The voucher of the offer comes from a second request this demo never makes.
  state.feed.offer = { title: 'Offer of the day', percent: 20 };
  byId('feed-spinner').hidden = true;
  setText('feed-status', '3 new posts.');
  byId('feed-skeleton').hidden = true;
  byId('feed-items').hidden = false;
}

function stopFeed() {
  if (state.feed.timer !== null) clearTimeout(state.feed.timer);
  state.feed.timer = null;
  byId('feed-spinner').hidden = true;
}

function claimOffer() {
  var code = state.feed.offer.voucher.code;
  showMessage('feed-message', 'Offer claimed. Your code: ' + code + '.');
}

/* ---------- gallery (implicit loading) ---------- */

function startGallery() {
  stopGallery();
  for (var n = 1; n <= GALLERY_DELAYS.length; n++) {
    byId('gallery-img-' + n).innerHTML = '<div class="placeholder"></div>';
    state.galleryTimers.push(setTimeout(loadGalleryImage, GALLERY_DELAYS[n - 1], n));
  }
}

function loadGalleryImage(n) {
  placePicture('gallery-img-' + n, 'gallery-pic-' + n, 'Photo ' + n, ((n - 1) % 6) + 1);
}

function stopGallery() {
  for (var i = 0; i < state.galleryTimers.length; i++) clearTimeout(state.galleryTimers[i]);
  state.galleryTimers = [];
}

/* ---------- settings ---------- */

function renderSettings() {
  byId('settings-dark').checked = state.settings.dark;
  byId('settings-notify').checked = state.settings.notifications;
}

function applyTheme() {
  document.body.classList.toggle('dark', state.settings.dark);
}

function toggleDark() {
  state.settings.dark = byId('settings-dark').checked;
  showMessage('settings-status', '');
  applyTheme();
}

function toggleNotifications() {
  state.settings.notifications = byId('settings-notify').checked;
  // Bug F: with notifications off the home counter's notifier is gone.
  state.notifier = state.settings.notifications ? makeNotifier() : null;
  showMessage('settings-status', '');
}

function saveSettings() {
  showMessage('settings-status', 'Settings saved: dark theme ' +
    (state.settings.dark ? 'on' : 'off') + ', notifications ' +
    (state.settings.notifications ? 'on' : 'off') + '.');
}

/* ---------- dialogs ---------- */

function openHelp() {
  state.helpOpen = true;
  byId('help-dialog').hidden = false;
  byId('help-close').focus();
}

function closeHelp() {
  if (!state.helpOpen) return;
  state.helpOpen = false;
  byId('help-dialog').hidden = true;
}

function openConfirm() {
  state.confirmOpen = true;
  byId('confirm-dialog').hidden = false;
  byId('confirm-no').focus();
}

function closeConfirm() {
  if (!state.confirmOpen) return;
  state.confirmOpen = false;
  state.list.pendingRemoveId = null;
  byId('confirm-dialog').hidden = true;
}

function onKeyDown(event) {
  if (event.key !== 'Escape') return;
  if (state.helpOpen) closeHelp();
  else if (state.confirmOpen) closeConfirm();
}

/* ---------- start-up ---------- */

function bindEvents() {
  var navButtons = document.querySelectorAll('[data-route]');
  for (var i = 0; i < navButtons.length; i++) {
    navButtons[i].addEventListener('click', onNavClick);
  }
  byId('back-home').addEventListener('click', goHome);
  byId('help-open').addEventListener('click', openHelp);
  byId('help-close').addEventListener('click', closeHelp);
  byId('home-counter-btn').addEventListener('click', incrementHomeCounter);

  byId('login-form').addEventListener('submit', submitLogin);
  byId('account-signout').addEventListener('click', signOut);

  byId('profile-form').addEventListener('submit', submitProfile);
  byId('form-volume').addEventListener('input', updateVolume);

  byId('list-add-form').addEventListener('submit', addItem);
  byId('list-select-all').addEventListener('click', selectAllItems);
  byId('list-archive').addEventListener('click', archiveSelected);
  byId('list-undo').addEventListener('click', undoArchive);
  byId('confirm-yes').addEventListener('click', confirmRemove);
  byId('confirm-no').addEventListener('click', closeConfirm);

  for (var n = 1; n <= 3; n++) {
    byId('cart-inc-' + n).addEventListener('click', changeQuantity);
    byId('cart-dec-' + n).addEventListener('click', changeQuantity);
  }
  byId('cart-apply').addEventListener('click', applyCoupon);
  byId('cart-checkout').addEventListener('click', checkout);

  byId('canvas-toolbar').addEventListener('click', onCanvasClick);
  byId('slow-reload').addEventListener('click', startSlowPage);
  byId('feed-reload').addEventListener('click', startFeed);
  byId('feed-claim').addEventListener('click', claimOffer);
  byId('gallery-reload').addEventListener('click', startGallery);

  byId('settings-dark').addEventListener('change', toggleDark);
  byId('settings-notify').addEventListener('change', toggleNotifications);
  byId('settings-save').addEventListener('click', saveSettings);

  document.addEventListener('keydown', onKeyDown);
  window.addEventListener('hashchange', handleRoute);
}

function init() {
  state.notifier = makeNotifier();
  bindEvents();
  renderHeader();
  applyTheme();
  renderList();
  renderCart();
  handleRoute();
}

init();

// Twelve rows with one handler (each opens the row's dialog), a toolbar of three
// different buttons (two open dialogs, one counts in place), and dialogs that close with
// their Close button or Escape.

var clicks = 0;

function openRow(event) {
  document.getElementById('row-text').textContent = event.target.textContent;
  document.getElementById('row-dialog').showModal();
}

function closeDialog(event) {
  event.target.closest('dialog').close();
}

function openNew() {
  document.getElementById('new-dialog').showModal();
}

function openHelp() {
  document.getElementById('help-dialog').showModal();
}

function count() {
  clicks = clicks + 1;
  document.getElementById('count').textContent = 'Count ' + clicks;
}

var rows = document.getElementById('rows');
for (var i = 1; i <= 12; i++) {
  var li = document.createElement('li');
  var b = document.createElement('button');
  b.type = 'button';
  b.textContent = 'Row ' + i;
  b.addEventListener('click', openRow);
  li.appendChild(b);
  rows.appendChild(li);
}
document.getElementById('new').addEventListener('click', openNew);
document.getElementById('help').addEventListener('click', openHelp);
document.getElementById('count').addEventListener('click', count);
for (var id of ['row-close', 'new-close', 'help-close']) {
  document.getElementById(id).addEventListener('click', closeDialog);
}

// The paper's Listing 1 as a web page. The MainWindow's fields are two globals.
'use strict';

var enabled = true;
var text = 'Hello World';

function e1() {
  enabled = false;
}

function e2() {
  // Throws once e4 has set text to null: the bug <e3, e4, e2> finds.
  text = text.toLowerCase();
}

function e3() {
  if (enabled) openDialog();
  else log(text);
}

function e4() {
  text = null;
  closeDialog();
}

function openDialog() {
  document.getElementById('dialog').showModal();
}

function closeDialog() {
  document.getElementById('dialog').close();
}

function log(message) {
  document.getElementById('log').textContent = message;
}

document.getElementById('e1').addEventListener('click', e1);
document.getElementById('e2').addEventListener('click', e2);
document.getElementById('e3').addEventListener('click', e3);
document.getElementById('e4').addEventListener('click', e4);

// Listing 1 of Arlt et al. (ISSTA 2012) in JavaScript: two globals shared by four
// event handlers. e1 writes `enabled`, which e3 reads; e4 writes `text`, which e2 reads.

var enabled = true;
var text = "Hello World";

function e1() {
  enabled = false;
}

function e2() {
  text = text.toLowerCase();
}

function e3() {
  if (enabled)
    openDialog();
  else
    log(text);
}

function e4() {
  text = null;
  closeDialog();
}

function openDialog() {
  document.getElementById('dialog').hidden = false;
}

function closeDialog() {
  document.getElementById('dialog').hidden = true;
}

function log(message) {
  console.log(message);
}

document.getElementById('e1').addEventListener('click', e1);
document.getElementById('e2').addEventListener('click', e2);
document.getElementById('e3').addEventListener('click', e3);
document.getElementById('e4').addEventListener('click', e4);

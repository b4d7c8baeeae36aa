// Hash routes: #/home, #/a, #/b. `armed` lives as long as the document.
var armed = false;
var shown = { text: '' };

function show(route) {
  var name = route.replace('#/', '') || 'home';
  for (var s of document.querySelectorAll('section')) {
    s.classList.toggle('on', s.id === name);
  }
}

function go(route) {
  location.hash = route;
}

function arm() {
  armed = true;
}

function note(text) {
  shown.text = text;
}

document.getElementById('arm').addEventListener('click', arm);
document.getElementById('next').addEventListener('click', function () {
  go(armed ? '#/b' : '#/a');
});
document.getElementById('to-b').addEventListener('click', function () { go('#/b'); });
document.getElementById('a1').addEventListener('click', function () { note('a'); });
document.getElementById('b1').addEventListener('click', function () { note('b'); });
document.getElementById('home-a').addEventListener('click', function () { go('#/home'); });
document.getElementById('home-b').addEventListener('click', function () { go('#/home'); });
window.addEventListener('hashchange', function () { show(location.hash); });
show(location.hash || '#/home');

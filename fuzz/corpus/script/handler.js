document.getElementById('go').addEventListener('click', function () { count += 1; render(); });
function render() { document.title = String(count); }

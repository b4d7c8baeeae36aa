"""The PyTorch peer of `cargo xtask rl-bench`: the PIRLTest Q-network written the usual
way (one nn.Sequential over the concatenated state and action, autograd, torch.optim.Adam),
timed on the same shapes as the Rust side. Prints one JSON object."""
import json
import statistics
import sys
import time

import torch

STATE, ACTION, HIDDEN, BATCH = int(sys.argv[1]), int(sys.argv[2]), 512, 64
STATES, CANDIDATES, ITERS = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
torch.manual_seed(0)
layers, width = [], STATE + ACTION
for _ in range(4):
    layers += [torch.nn.Linear(width, HIDDEN), torch.nn.ReLU()]
    width = HIDDEN
net = torch.nn.Sequential(*layers, torch.nn.Linear(width, 1))
opt = torch.optim.Adam(net.parameters(), lr=0.01)

x = torch.randn(BATCH, STATE + ACTION)
y = torch.randn(BATCH, 1)
pages = torch.randn(STATES, STATE)
cands = torch.randn(STATES, CANDIDATES, ACTION)
page_of = torch.arange(BATCH) % STATES
rewards = torch.rand(BATCH)


def grad_step():
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(net(x), y)
    loss.backward()
    opt.step()


def choose():
    # Q of every candidate action of one state: the state repeated on each row.
    with torch.no_grad():
        rows = torch.cat([pages[0].expand(CANDIDATES, STATE), cands[0]], dim=1)
        return net(rows).argmax()


def dqn_update():
    # Eq. 3 targets (max over each sample's next candidates), then one gradient step.
    with torch.no_grad():
        nxt = torch.cat(
            [pages[page_of].unsqueeze(1).expand(BATCH, CANDIDATES, STATE), cands[page_of]],
            dim=2,
        ).reshape(BATCH * CANDIDATES, STATE + ACTION)
        target = rewards + 0.9 * net(nxt).reshape(BATCH, CANDIDATES).max(dim=1).values
    sa = torch.cat([pages[(page_of + 1) % STATES], cands[page_of, 0]], dim=1)
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(net(sa).squeeze(1), target)
    loss.backward()
    opt.step()


def median_ms(f):
    f()
    times = []
    for _ in range(ITERS):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


print(json.dumps({
    "torch": torch.__version__,
    "threads": torch.get_num_threads(),
    "grad_step_ms": median_ms(grad_step),
    "choose_ms": median_ms(choose),
    "dqn_update_ms": median_ms(dqn_update),
}))

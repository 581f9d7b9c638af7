"""Hogwild: several processes train one model in shared memory without locks
(PyTorch's mnist_hogwild example). model.share_memory() moves the weights into shared memory;
each Process (fork) trains on its share of Fashion-MNIST with its own optimizer."""
import argparse

import ember
import ember.multiprocessing as mp
import ember.nn.functional as F
from ember.utils.data import DataLoader, FashionMNIST


def train(rank, model, args):
    ember.set_num_threads(1)
    ember.manual_seed(args.seed + rank)
    data = FashionMNIST(train=True)
    loader = DataLoader(data, batch_size=64, shuffle=True)
    opt = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for i, (x, y) in enumerate(loader):
        if i % args.processes != rank:
            continue  # every process its share of the batches
        if i >= args.batches:
            break
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()


def test(model):
    model.eval()
    correct = 0
    test_data = FashionMNIST(train=False)
    with ember.no_grad():
        for x, y in DataLoader(test_data, batch_size=1000):
            correct += (model(x).argmax(1) == y).sum().item()
    return correct / len(test_data)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--batches", type=int, default=938, help="batches of the epoch to train")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    ember.manual_seed(args.seed)
    model = ember.models.LeNet()
    model.share_memory()
    procs = [mp.Process(target=train, args=(rank, model, args)) for rank in range(args.processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise SystemExit(f"a worker failed with exit code {p.exitcode}")
    print(f"test accuracy after Hogwild with {args.processes} processes: {100 * test(model):.2f}%")

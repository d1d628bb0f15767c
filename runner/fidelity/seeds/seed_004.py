"""Seed 004 (MNIST benchmarks, PyTorch side): pytorch/examples mnist/main.py as the seed ran it (2023): Net,
train() with its log line every 10 batches, Adadelta(lr=1.0), StepLR(step_size=1, gamma=0.7), train_kwargs
{'batch_size': 64} plus {'num_workers': 1, 'pin_memory': True, 'shuffle': True} under CUDA, and the
MNIST dataset's PIL images through ToTensor() and Normalize((0.1307,), (0.3081,)) (torchvision's; where it is
absent, its code path for a PIL image written out here, checks and per-call bookkeeping included). The data is
synthetic uint8 images (nothing is downloaded); the test pass after each epoch is left out (the suite times training);
`--epochs` epochs after a warm-up epoch. Imports nothing from benchsite. Prints one JSON line: seconds per
epoch."""

import argparse
import json
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from PIL import Image
from torch.optim.lr_scheduler import StepLR

try:
    from torchvision import transforms
except Exception:  # noqa: BLE001 - torchvision absent or built for another torch: its code path, inline
    transforms = None

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu")
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--n", type=int, default=60000)
args = parser.parse_args()


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()  # noqa: UP008 - the example's own line
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def _api_usage(name):
    # torchvision logs one API-usage event per transform call (a no-op logger unless one is installed)
    torch._C._log_api_usage_once(f"torchvision.transforms.{name}")


def to_tensor(pic):
    # torchvision.transforms.functional.to_tensor for a PIL image, its checks included
    if not torch.jit.is_scripting() and not torch.jit.is_tracing():
        _api_usage("functional.to_tensor")
    if not (isinstance(pic, Image.Image) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    default_float_dtype = torch.get_default_dtype()
    mode_to_nptype = {"I": np.int32, "I;16" if sys.byteorder == "little" else "I;16B": np.int16, "F": np.float32}
    img = torch.from_numpy(np.array(pic, mode_to_nptype.get(pic.mode, np.uint8), copy=True))
    if pic.mode == "1":
        img = 255 * img
    channels = len(pic.getbands()) if hasattr(pic, "getbands") else pic.channels
    img = img.view(pic.size[1], pic.size[0], channels).permute((2, 0, 1)).contiguous()
    if isinstance(img, torch.ByteTensor):
        return img.to(dtype=default_float_dtype).div(255)
    return img


class Normalize(nn.Module):
    # torchvision.transforms.Normalize: a module, whose forward runs functional.normalize and its tensor kernel
    def __init__(self, mean, std):
        super().__init__()
        _api_usage("Normalize")
        self.mean, self.std = mean, std

    def forward(self, tensor):
        if not torch.jit.is_scripting() and not torch.jit.is_tracing():
            _api_usage("functional.normalize")
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
        if not tensor.ndim >= 2 or not tensor.is_floating_point() or tensor.ndim < 3:
            raise TypeError("Tensor is not a float tensor image.")
        tensor = tensor.clone()
        mean = torch.as_tensor(self.mean, dtype=tensor.dtype, device=tensor.device)
        std = torch.as_tensor(self.std, dtype=tensor.dtype, device=tensor.device)
        if (std == 0).any():
            raise ValueError("std evaluated to zero")
        if mean.ndim == 1:
            mean = mean.view(-1, 1, 1)
        if std.ndim == 1:
            std = std.view(-1, 1, 1)
        return tensor.sub_(mean).div_(std)


class Compose:
    # torchvision.transforms.Compose
    def __init__(self, steps):
        if not torch.jit.is_scripting() and not torch.jit.is_tracing():
            _api_usage("Compose")
        self.steps = steps

    def __call__(self, img):
        for t in self.steps:
            img = t(img)
        return img


class ToTensor:
    def __init__(self):
        _api_usage("ToTensor")

    def __call__(self, pic):
        return to_tensor(pic)


if transforms is not None:
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
else:
    transform = Compose([ToTensor(), Normalize((0.1307,), (0.3081,))])


class MNIST(torch.utils.data.Dataset):
    """torchvision.datasets.MNIST's __getitem__ over synthetic images."""

    def __init__(self, n, transform):
        self.data = torch.randint(0, 256, (n, 28, 28), dtype=torch.uint8)
        self.targets = torch.randint(0, 10, (n,))
        self.transform = transform

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        img = Image.fromarray(img.numpy(), mode="L")
        img = self.transform(img)
        return img, target


def train(model, device, train_loader, optimizer, epoch, log_interval=10):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % log_interval == 0:
            print(
                "Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                    epoch,
                    batch_idx * len(data),
                    len(train_loader.dataset),
                    100.0 * batch_idx / len(train_loader),
                    loss.item(),
                ),
                file=sys.stderr,
            )


def main():
    use_cuda = args.device == "cuda"
    device = torch.device(args.device)
    train_kwargs = {"batch_size": 64}
    if use_cuda:
        cuda_kwargs = {"num_workers": 1, "pin_memory": True, "shuffle": True}
        train_kwargs.update(cuda_kwargs)
    train_loader = torch.utils.data.DataLoader(MNIST(args.n, transform), **train_kwargs)
    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    train(model, device, train_loader, optimizer, 0)  # warm-up (benchsite records it apart)
    scheduler.step()
    if use_cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        train(model, device, train_loader, optimizer, epoch)
        scheduler.step()
    if use_cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    print(json.dumps({"per_unit_s": seconds / args.epochs, "units": args.epochs}))


if __name__ == "__main__":
    main()

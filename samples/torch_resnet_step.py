#!/usr/bin/env python3
"""A torchvision ResNet-18 training loop (random weights: nothing is downloaded), batch 32 of
64x64 images, SGD, with the running loss read every step by loss.item() as many training
scripts do: that read waits for the step's backward and optimizer work.

Usage: python3 torch_resnet_step.py [steps=30]
Prints: the steps and the mean loss.
"""
import sys

import torch
import torchvision


def train(steps: int) -> float:
    model = torchvision.models.resnet18(weights=None, num_classes=100).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    images = torch.randn(32, 3, 64, 64, device="cuda")
    labels = torch.randint(0, 100, (32,), device="cuda")
    running_loss = 0.0
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()  # the wait
    return running_loss / steps


def main() -> int:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    torch.manual_seed(0)
    mean = train(steps)
    print(f"torch_resnet_step: steps={steps} mean_loss_finite={mean == mean}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

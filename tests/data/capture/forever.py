"""Test job: never takes a step (an endless loop of small ops)."""
import torch

x = torch.zeros(256, device="cuda")
while True:
    x = x + 1

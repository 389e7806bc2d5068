"""A small ResNet-like network, built by a function as torchvision's are
(tests/cli/t78-models.sh takes it as `tiny_resnet.py:tiny_resnet`): a stem,
BLOCKS identical residual blocks (conv, batch norm, ReLU), a pooled linear
classifier. Its blocks repeat, so the split's distinct tasks do not grow with
`blocks`."""
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv1 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.drop = nn.Dropout(0.2)

    def forward(self, x):
        y = self.bn1(self.conv1(x)).relu()
        y = self.bn2(self.conv2(y))
        return self.drop((x + y).relu())


class TinyResNet(nn.Module):
    def __init__(self, width=8, blocks=2, num_classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(width)
        self.layers = nn.Sequential(*[Block(width) for _ in range(blocks)])
        self.fc = nn.Linear(width, num_classes)

    def forward(self, x):
        x = self.bn(self.stem(x)).relu()
        x = self.layers(x)
        return self.fc(x.mean((2, 3)))


def tiny_resnet(**kwargs):
    return TinyResNet(**kwargs)

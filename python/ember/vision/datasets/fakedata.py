"""FakeData (torchvision.datasets.FakeData): random PIL images and targets, the same for the same
index, for trying a pipeline without data."""
from ... import Generator, randint, randn
from .. import transforms
from .vision import VisionDataset


class FakeData(VisionDataset):
    """`size` random images of `image_size` (C, H, W) and targets in [0, num_classes)."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index):
        """(PIL image, int target) of sample `index`."""
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        # torchvision seeds torch's global generator with the index and restores it after; a
        # generator of its own draws the same numbers and leaves the global one alone.
        g = Generator()
        g.manual_seed(index + self.random_offset)
        img = randn(*self.image_size, generator=g)
        target = randint(0, self.num_classes, size=(1,), generator=g)[0]
        img = transforms.ToPILImage()(img)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target.item()

    def __len__(self):
        return self.size

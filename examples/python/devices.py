"""Finding and describing the devices (the guides' first step): is CUDA there, how many GPUs,
what they are, and the d2l.ai helpers try_gpu / try_all_gpus."""
import ember

print("CUDA available:", ember.cuda.is_available())
if not ember.cuda.is_available():
    print("  why not:", ember.cuda.unavailable_reason())
print("GPUs:", ember.cuda.device_count())
for i in range(ember.cuda.device_count()):
    p = ember.cuda.get_device_properties(i)
    free, total = ember.cuda.mem_get_info(i)
    print(f"  cuda:{i} {p.name}, compute capability {p.major}.{p.minor}, {p.multi_processor_count} SMs,"
          f" {total / 2**30:.1f} GiB ({free / 2**30:.1f} free), PCI {p.pci_bus_id}")
print("try_gpu():", ember.cuda.try_gpu(), " try_gpu(10):", ember.cuda.try_gpu(10))
print("try_all_gpus():", ember.cuda.try_all_gpus())
x = ember.tensor([1, 2, 3])
print("a tensor is made on", x.device)

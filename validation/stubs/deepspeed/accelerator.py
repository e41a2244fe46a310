class _Cpu:
    def synchronize(self):
        pass

    def device_name(self, *a):
        return "cpu"

    def current_device_name(self):
        return "cpu"


def get_accelerator():
    return _Cpu()

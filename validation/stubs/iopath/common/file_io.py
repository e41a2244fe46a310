"""Stub of iopath.common.file_io: names fvcore imports; any use raises."""


class PathManager:
    def __getattr__(self, name):
        raise NotImplementedError("iopath stub: " + name)

    def register_handler(self, *a, **k):
        pass


class PathHandler:
    pass


class HTTPURLHandler(PathHandler):
    pass


class OneDrivePathHandler(PathHandler):
    pass


g_pathmgr = PathManager()

class GatedRepoError(Exception):
    pass


class RepositoryNotFoundError(Exception):
    pass

from programs.file_extension import file_extension
def test_file_extension():
    assert file_extension("report.PDF") == "pdf"
    assert file_extension("backup/db.tar.gz") == "gz"

//! A wheel downloaded, its hash checked, and its files unpacked read-only.
//! A wheel is a zip archive of the files an installer would copy; nothing in
//! it runs here. An entry that would land outside the folder, or an archive
//! that unpacks past [`MAX_UNPACKED`], is refused.

use std::io::{Cursor, Read};
use std::path::Path;

use sha2::{Digest, Sha256};

use super::PackageError;
use super::index::Wheel;

/// The most a wheel unpacks to.
pub const MAX_UNPACKED: u64 = 512 << 20;
/// The largest wheel downloaded.
pub const MAX_WHEEL: usize = 256 << 20;

/// The bytes of `wheel`, checked against the hash the index announced and,
/// when there is one, the hash the operator approved.
pub async fn download(
    client: &reqwest::Client,
    wheel: &Wheel,
    approved: Option<&str>,
) -> Result<Vec<u8>, PackageError> {
    let failed = |detail: String| PackageError::Index {
        index: wheel.url.clone(),
        detail,
    };
    let response = client
        .get(&wheel.url)
        .send()
        .await
        .map_err(|error| failed(format!("cannot download {}: {error}", wheel.file)))?;
    if !response.status().is_success() {
        return Err(failed(format!(
            "downloading {} answered {}",
            wheel.file,
            response.status()
        )));
    }
    let mut response = response;
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| failed(format!("cannot download {}: {error}", wheel.file)))?
    {
        if bytes.len() + chunk.len() > MAX_WHEEL {
            return Err(failed(format!(
                "{} is larger than {} MiB; refused",
                wheel.file,
                MAX_WHEEL >> 20
            )));
        }
        bytes.extend_from_slice(&chunk);
    }
    let found = hex::encode(Sha256::digest(&bytes));
    let checks = [
        (Some(wheel.sha256.as_str()), "announced by the index"),
        (approved, "approved by the operator"),
    ];
    for (expected, source_of_expected) in checks {
        if let Some(expected) = expected
            && !expected.eq_ignore_ascii_case(&found)
        {
            return Err(PackageError::HashMismatch {
                file: wheel.file.clone(),
                found,
                expected: expected.to_owned(),
                source_of_expected,
            });
        }
    }
    Ok(bytes)
}

/// Whether a wheel's entry is compiled code for a native platform.
pub fn is_native(name: &str) -> bool {
    [".so", ".pyd", ".dylib", ".dll"]
        .iter()
        .any(|suffix| name.ends_with(suffix))
        || name.contains(".so.")
}

/// Unpacks the wheel `file`'s `bytes` into `into`, leaving out its compiled
/// modules when `python_only`; how many files it unpacked.
pub fn unpack(
    file: &str,
    bytes: &[u8],
    into: &Path,
    python_only: bool,
) -> Result<usize, PackageError> {
    unpack_within(file, bytes, into, python_only, MAX_UNPACKED)
}

/// [`unpack`], refusing an archive that inflates past `limit` bytes.
fn unpack_within(
    file: &str,
    bytes: &[u8],
    into: &Path,
    python_only: bool,
    limit: u64,
) -> Result<usize, PackageError> {
    let bad = |detail: String| PackageError::BadWheel {
        file: file.to_owned(),
        detail,
    };
    let io = |error: std::io::Error| PackageError::Io(format!("unpacking {file}: {error}"));
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|error| bad(format!("is not a zip archive: {error}")))?;
    let mut total = 0u64;
    let mut files = 0;
    for index in 0..archive.len() {
        let mut entry = archive
            .by_index(index)
            .map_err(|error| bad(format!("entry {index} cannot be read: {error}")))?;
        let Some(relative) = entry.enclosed_name() else {
            return Err(bad(format!(
                "holds `{}`, a path outside the package folder",
                entry.name()
            )));
        };
        let target = into.join(relative);
        if python_only && is_native(entry.name()) {
            continue;
        }
        if entry.is_dir() {
            std::fs::create_dir_all(&target).map_err(io)?;
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        // The bytes actually inflated count, not the sizes the archive
        // claims: one more than the room left is enough to refuse.
        let room = limit - total;
        let mut contents = Vec::new();
        entry
            .by_ref()
            .take(room + 1)
            .read_to_end(&mut contents)
            .map_err(|error| bad(format!("`{}` cannot be read: {error}", entry.name())))?;
        total += contents.len() as u64;
        if total > limit {
            return Err(bad(format!("unpacks to more than {} bytes", limit)));
        }
        std::fs::write(&target, contents).map_err(io)?;
        files += 1;
    }
    Ok(files)
}

/// Makes everything in `folder` read-only, so nothing that runs there can
/// change it even by mistake.
pub fn seal(folder: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            seal(&entry.path())?;
        }
        let mut permissions = entry.metadata()?.permissions();
        permissions.set_readonly(true);
        std::fs::set_permissions(entry.path(), permissions)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn wheel(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, contents) in entries {
            writer
                .start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            writer.write_all(contents.as_bytes()).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    #[test]
    fn a_wheel_unpacks_its_files_and_a_path_out_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        let bytes = wheel(&[
            ("greet/__init__.py", "def hi():\n    return 'hi'\n"),
            ("greet-1.0.dist-info/METADATA", "Name: greet\n"),
        ]);
        assert_eq!(
            unpack("greet-1.0-py3-none-any.whl", &bytes, folder.path(), false).unwrap(),
            2
        );
        assert!(folder.path().join("greet/__init__.py").is_file());
        seal(folder.path()).unwrap();
        let sealed = std::fs::metadata(folder.path().join("greet/__init__.py")).unwrap();
        assert!(sealed.permissions().readonly());

        let out = tempfile::tempdir().unwrap();
        let slip = wheel(&[("../../escaped.py", "print('out')\n")]);
        let refused = unpack(
            "evil-1.0-py3-none-any.whl",
            &slip,
            &out.path().join("site"),
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(
            refused.contains("a path outside the package folder"),
            "{refused}"
        );
        assert!(!out.path().join("escaped.py").exists());
        let refused = unpack("junk-1.0-py3-none-any.whl", b"not a zip", out.path(), false)
            .unwrap_err()
            .to_string();
        assert!(refused.contains("is not a zip archive"), "{refused}");

        let native = wheel(&[
            ("yaml/__init__.py", "pure = True\n"),
            ("yaml/_yaml.cpython-311-x86_64-linux-gnu.so", "ELF"),
        ]);
        let site = tempfile::tempdir().unwrap();
        let file = "pyyaml-6.0.3-cp311-cp311-manylinux_2_17_x86_64.whl";
        assert_eq!(unpack(file, &native, site.path(), true).unwrap(), 1);
        assert!(site.path().join("yaml/__init__.py").is_file());
        assert!(
            !site
                .path()
                .join("yaml/_yaml.cpython-311-x86_64-linux-gnu.so")
                .exists()
        );
    }

    #[test]
    fn a_wheel_inflating_past_its_bound_is_refused_by_the_bytes_it_holds() {
        let zeros = "0".repeat(4096);
        let bomb = wheel(&[("a.py", zeros.as_str()), ("b.py", zeros.as_str())]);
        assert!(bomb.len() < 1024, "it compresses well: {}", bomb.len());
        let site = tempfile::tempdir().unwrap();
        let refused = unpack_within("bomb-1-py3-none-any.whl", &bomb, site.path(), false, 6000)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("unpacks to more than 6000 bytes"),
            "{refused}"
        );
        assert_eq!(
            unpack_within("bomb-1-py3-none-any.whl", &bomb, site.path(), false, 8192).unwrap(),
            2
        );
    }

    #[tokio::test]
    async fn a_download_stops_at_its_bound_however_much_the_index_sends() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // An index that answers with bytes and never ends.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let sent = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = std::sync::Arc::clone(&sent);
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0; 4096];
            let _ = socket.read(&mut request).await;
            let header = "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\nconnection: close\r\n\r\n";
            socket.write_all(header.as_bytes()).await.unwrap();
            let chunk = vec![0u8; 1 << 20];
            while socket.write_all(&chunk).await.is_ok() {
                counted.fetch_add(chunk.len(), std::sync::atomic::Ordering::Relaxed);
            }
        });
        let wheel = Wheel {
            requirement: crate::packages::requirements::Requirement {
                name: "endless".into(),
                version: "1".into(),
            },
            file: "endless-1-py3-none-any.whl".into(),
            url: format!("http://{address}/endless-1-py3-none-any.whl"),
            sha256: "00".repeat(32),
            python_only: false,
        };
        let client = reqwest::Client::new();
        let error = tokio::time::timeout(
            std::time::Duration::from_secs(60),
            download(&client, &wheel, None),
        )
        .await
        .expect("the download ends at its bound, not never")
        .expect_err("refused");
        assert!(
            error
                .to_string()
                .contains("endless-1-py3-none-any.whl is larger than 256 MiB; refused"),
            "{error}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let sent = sent.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            sent < MAX_WHEEL + (64 << 20),
            "the download stopped reading near its bound: {} MiB sent",
            sent >> 20
        );
    }
}

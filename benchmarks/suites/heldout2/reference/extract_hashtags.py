def extract_hashtags(text):
    tags = []
    for word in text.split():
        if word.startswith("#") and len(word) > 1:
            tags.append(word[1:].lower())
    return tags
